// The one entrypoint: `ROLES` chooses what this process runs.
//
// Tracing starts first, when OTEL_EXPORTER_OTLP_ENDPOINT asks for it, and
// everything else is imported after it (config.ts too: it loads ioredis), so
// the instrumentations patch koa, pg, ioredis and http as they load. Without
// the variable nothing of OpenTelemetry is loaded (shared/tracing.ts).
import { startTracing } from '../shared/tracing.js';

async function main() {
  const tracing = await startTracing('axid');
  const { ConfigError, loadConfig } = await import('../shared/config.js');
  const { createLogger } = await import('../shared/logger.js');
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
    const { startStack } = await import('./stack.js');
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
    // The spans still buffered (the last requests', the shutdown's).
    await tracing?.shutdown().catch(() => undefined);
    log.flush?.();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

void main();
