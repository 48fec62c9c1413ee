// `npm run migrate`: migrations alone (a Kubernetes Job runs this), then exit.
import { loadConfig } from '../shared/config.js';
import { createDb, ensureDatabase } from '../shared/db/knex.js';
import { migrateLatest } from '../shared/db/migrate.js';
import { createLogger } from '../shared/logger.js';
import { existsAt } from '../shared/feature-level.js';
import { bootstrapWorkspace } from './core/bootstrap.js';
import { SYSTEM_AGENT } from './core/workspaces/system-agent.js';

const config = loadConfig();
const log = createLogger(config.logLevel);
await ensureDatabase(config.databaseUrl);
const db = createDb(config.databaseUrl, 2);
// The first workspace has its system agent where the level has one.
const first = { adminKey: config.bootstrapAdminKey, systemAgent: existsAt(SYSTEM_AGENT, config.featureLevel) };
try {
  const applied = await migrateLatest(db, { lock: true, then: (trx) => bootstrapWorkspace(trx, first, log) });
  log.info({ applied }, applied.length ? 'migrations applied' : 'database is up to date');
} finally {
  await db.destroy();
}
