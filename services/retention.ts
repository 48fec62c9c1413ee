// `npm run retention`: the retention job once, now (the worker runs the same
// job daily; docs/operations.md "Retention"), then exit.
import { loadConfig } from '../shared/config.js';
import { createLogger } from '../shared/logger.js';
import { runRetention } from './core/retention/retention.jobs.js';
import { openStores } from './stores.js';

const config = loadConfig();
const log = createLogger(config.logLevel);
const stores = await openStores(config, log);
try {
  await runRetention({ db: stores.db, s3: stores.s3, log, config });
} finally {
  await stores.close();
}
