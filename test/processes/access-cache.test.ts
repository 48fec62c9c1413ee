import { expect } from 'chai';
import { Redis } from 'ioredis';
import { ACCESS_EVENT_TYPES } from '../../shared/events.js';
import { keys } from '../../shared/redis.js';
import { Client } from '../support/client.js';
import { expectError, expectOk } from '../support/expect.js';
import { processEnv, startProcess, type RunningProcess } from '../support/stack-process.js';
import { testEnv } from '../support/stack.js';

describe('cached keys across API replicas', function () {
  this.timeout(60_000);
  const env = testEnv();
  const key = 'c'.repeat(40);
  let a: RunningProcess;
  let b: RunningProcess;

  before(async () => {
    const common = processEnv(env, { BOOTSTRAP_ADMIN_KEY: key, LOG_LEVEL: 'warn', ROLES: 'api' });
    a = await startProcess(common);
    b = await startProcess(common);
  });
  after(async () => {
    await Promise.all([a.stop(), b.stop()]);
    await env.cleanup();
  });

  it('refuses a key revoked on one replica on the other as soon as the event arrives', async () => {
    const created = expectOk(await new Client(a.url, key).post('/api/v1/api-keys', { name: 'shared' }), 201).data;
    const onA = new Client(a.url, created.key);
    const onB = new Client(b.url, created.key);
    expectOk(await onA.get('/api/v1/users/me'));
    expectOk(await onB.get('/api/v1/users/me')); // now cached on B
    const channel = expectOk(await new Client(a.url, key).post('/api/v1/channels', { name: `access-${Date.now()}` }), 201).data;
    expectOk(await new Client(a.url, key).post(`/api/v1/channels/${channel.id}/messages`, { content: 'not an access event' }), 201);
    expect((await new Client(a.url, key).delete(`/api/v1/api-keys/${created.id}`)).status).to.equal(204);
    expectError(await onA.get('/api/v1/users/me'), 401, 'unauthorized'); // the replica that committed: at once
    const deadline = Date.now() + 5_000;
    let status = 200;
    while (Date.now() < deadline && (status = (await onB.get('/api/v1/users/me')).status) === 200) {
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(status).to.equal(401);
    // API-only processes read the small access stream, which holds no other events.
    const redis = new Redis(env.config.redisUrl);
    try {
      const entries = await redis.xrange(keys(env.config.redisKeyPrefix).accessEvents, '-', '+');
      const types = entries.map(([, fields]) => JSON.parse(fields[1]!).type as string);
      expect(types).to.include('api_key.revoked');
      for (const type of types) expect(ACCESS_EVENT_TYPES.has(type), type).to.equal(true);
    } finally {
      redis.disconnect();
    }
  });
});
