import { loadConfig } from '../shared/config.js';
import { createLogger } from '../shared/logger.js';
import { startStack } from '../services/stack.js';
const config = loadConfig({ DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/axid_prof', PORT: '4999', HOST: '127.0.0.1', LOG_LEVEL: 'warn', REDIS_KEY_PREFIX: 'axidprof:', BOOTSTRAP_ADMIN_KEY: 'p'.repeat(40), RATE_LIMIT_POINTS: '100000000', DATA_DIR: '/tmp/axidprof', ROLES: process.env.ROLES ?? 'api,gateway,worker' });
const s = await startStack(config, createLogger('warn'));
console.log('ready', s.url);
process.on('SIGINT', async () => { await s.close(); process.exit(0); });
