// Postgres away: requests get 503 service_unavailable with Retry-After (never
// 500, never a hang), /readyz says 503, and the stack recovers by itself.
// Runs its own PostgreSQL on a spare port, stopped and restarted here.
import { expect } from 'chai';
import { startStack, type Stack } from '../../services/stack.js';
import { createLogger } from '../../shared/logger.js';
import { Client } from '../support/client.js';
import { expectError, expectOk } from '../support/expect.js';
import { waitFor } from '../support/files.js';
import { PrivatePostgres } from '../support/private-postgres.js';
import { newWorkspace, testEnv, uniqueName, type TestEnv } from '../support/stack.js';

describe('requests while Postgres is down', function () {
  this.timeout(90_000);
  let pg: PrivatePostgres;
  let env: TestEnv;
  let s: Stack;

  before(async () => {
    pg = await PrivatePostgres.start();
    env = testEnv({ DATABASE_URL: pg.url('axid') });
    s = await startStack(env.config, createLogger(env.config.logLevel));
  });

  after(async () => {
    await pg?.up().catch(() => undefined);
    await s?.close();
    await env?.cleanup();
    await pg?.stop();
  });

  it('answers 503 service_unavailable with Retry-After, /readyz 503, and recovers once Postgres is back', async () => {
    const ws = await newWorkspace(s);
    expectOk(await ws.owner.get('/api/v1/channels'));
    const anon = new Client(s.url);
    expect((await anon.get('/readyz')).status).to.equal(200);

    await pg.down();
    for (const res of [
      await ws.owner.get('/api/v1/channels'),
      await ws.owner.post('/api/v1/users', { name: uniqueName('outage') }),
      await new Client(s.url, 'axid_never-issued-key-never-issued-key-0000').get('/api/v1/users/me'),
    ]) {
      expectError(res, 503, 'service_unavailable');
      expect(res.headers.get('retry-after')).to.match(/^[1-9]\d*$/);
    }
    const ready = await anon.get('/readyz');
    expect(ready.status).to.equal(503);
    expect(ready.body).to.deep.equal({ status: 'unavailable' });

    await pg.up();
    await waitFor(async () => (await ws.owner.get('/api/v1/channels')).status === 200, 'requests to succeed again', 30_000);
    expectOk(await ws.owner.post('/api/v1/users', { name: uniqueName('after') }), 201);
    expect((await anon.get('/readyz')).status).to.equal(200);
  });
});
