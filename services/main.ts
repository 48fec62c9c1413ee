// The one entrypoint: `ROLES` chooses what this process runs.
import { ConfigError, loadConfig } from '../shared/config.js';
import { createLogger } from '../shared/logger.js';
import { startStack } from './stack.js';

async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`axid: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const log = createLogger(config.logLevel);
  let stack;
  try {
    stack = await startStack(config, log);
  } catch (err) {
    log.fatal({ err: (err as Error).message }, 'axid could not start');
    process.stderr.write(`axid: ${(err as Error).message}\n`);
    process.exit(1);
  }
  const stop = async (signal: string) => {
    log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    await stack.close();
    log.flush?.();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

void main();
