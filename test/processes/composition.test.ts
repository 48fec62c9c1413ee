// How a process is composed (services/stack.ts): MIGRATE_ON_START decides
// whether it migrates; with it off, `npm run migrate` (the Kubernetes Job)
// does the migrating and the roles only start.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';
import pg from 'pg';
import { ensureDatabase } from '../../shared/db/knex.js';
import { createLogger } from '../../shared/logger.js';
import { startStack } from '../../services/stack.js';
import { Client } from '../support/client.js';
import { expectOk } from '../support/expect.js';
import { processEnv, repoRoot } from '../support/stack-process.js';
import { testEnv } from '../support/stack.js';

async function tableCount(databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return Number((await client.query(`SELECT count(*) AS c FROM information_schema.tables WHERE table_schema = 'public'`)).rows[0].c);
  } finally {
    await client.end();
  }
}

describe('MIGRATE_ON_START', function () {
  this.timeout(90_000);

  it('off: the process migrates nothing; `npm run migrate` migrates and bootstraps, and the roles then serve', async () => {
    const env = testEnv({ MIGRATE_ON_START: 'false' });
    const log = createLogger(env.config.logLevel);
    try {
      await ensureDatabase(env.config.databaseUrl);
      const gatewayOnly = await startStack({ ...env.config, roles: ['gateway'] }, log);
      expect(await tableCount(env.config.databaseUrl), 'tables after a start with MIGRATE_ON_START=false').to.equal(0);
      await gatewayOnly.close();

      await promisify(execFile)(process.execPath, ['--import', 'tsx', 'services/migrate.ts'], { cwd: repoRoot, env: processEnv(env, { BOOTSTRAP_ADMIN_KEY: env.config.bootstrapAdminKey! }) });
      expect(await tableCount(env.config.databaseUrl)).to.be.above(0);

      const all = await startStack(env.config, log);
      try {
        const me = expectOk(await new Client(all.url, env.config.bootstrapAdminKey!).get('/api/v1/users/me'));
        expect(me.data.role).to.equal('owner');
      } finally {
        await all.close();
      }
    } finally {
      await env.cleanup();
    }
  });
});
