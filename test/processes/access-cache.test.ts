import { expect } from 'chai';
import { Redis } from 'ioredis';
import { ACCESS_EVENT_TYPES } from '../../shared/events.js';
import { keys } from '../../shared/redis.js';
import { STALE_AFTER_MS } from '../../shared/access-cache.js';
import { Client } from '../support/client.js';
import { PrivateRedis } from '../support/private-redis.js';
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

describe('cached access across API replicas while their Redis is paused (issue 33)', function () {
  this.timeout(120_000);
  let redis: PrivateRedis;
  let env: ReturnType<typeof testEnv>;
  const key = 'd'.repeat(40);
  let a: RunningProcess;
  let b: RunningProcess;
  // Far below the 30 s an entry lived before, and above the bound (STALE_AFTER_MS) with room for a busy machine.
  const REFUSED_WITHIN_MS = STALE_AFTER_MS + 8_000;

  before(async () => {
    redis = await PrivateRedis.start();
    env = testEnv({ REDIS_URL: redis.url });
    const common = processEnv(env, { BOOTSTRAP_ADMIN_KEY: key, LOG_LEVEL: 'warn', ROLES: 'api', REDIS_COMMAND_TIMEOUT_MS: '500' });
    a = await startProcess(common);
    b = await startProcess(common);
  });
  afterEach(async () => {
    redis.resume();
    // both replicas answer from Redis again before the next test warms their caches
    for (const p of [a, b]) {
      const deadline = Date.now() + 30_000;
      while ((await new Client(p.url).get('/readyz')).status !== 200) {
        if (Date.now() > deadline) throw new Error('a replica did not see Redis again');
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  });
  after(async () => {
    redis?.resume();
    await Promise.all([a?.stop(), b?.stop()]);
    await env?.cleanup();
    await redis?.stop();
  });

  /** Polls `probe` until it answers `status`; how long it took, or a failure at the deadline. */
  async function refusedWithin(probe: () => Promise<{ status: number }>, status: number, what: string): Promise<number> {
    const started = Date.now();
    let last = 0;
    while ((last = (await probe()).status) !== status) {
      if (Date.now() - started > REFUSED_WITHIN_MS) throw new Error(`${what}: still ${last} after ${REFUSED_WITHIN_MS} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return Date.now() - started;
  }

  it('refuses on one replica a key revoked on the other, within the bound, with the invalidation stream down', async () => {
    const admin = new Client(a.url, key);
    const created = expectOk(await admin.post('/api/v1/api-keys', { name: 'revoked while redis sleeps' }), 201).data;
    const onB = new Client(b.url, created.key);
    for (let i = 0; i < 3; i++) expectOk(await onB.get('/api/v1/users/me')); // cached on B
    redis.pause();
    expect((await admin.delete(`/api/v1/api-keys/${created.id}`)).status).to.equal(204);
    expectError(await new Client(a.url, created.key).get('/api/v1/users/me'), 401, 'unauthorized');
    const ms = await refusedWithin(() => onB.get('/api/v1/users/me'), 401, 'the revoked key on the other replica');
    // and it stays refused
    for (let i = 0; i < 5; i++) expectError(await onB.get('/api/v1/users/me'), 401, 'unauthorized');
    console.log(`      refused on the other replica ${ms} ms after the revocation (bound ${STALE_AFTER_MS} ms)`);
  });

  it('hides a private channel, new messages included, from a member removed on the other replica, within the bound', async () => {
    const admin = new Client(a.url, key);
    const member = expectOk(await admin.post('/api/v1/users', { name: `reader-${Date.now()}` }), 201).data;
    const channel = expectOk(await admin.post('/api/v1/channels', { name: `private-${Date.now()}`, is_private: true }), 201).data;
    expectOk(await admin.post(`/api/v1/channels/${channel.id}/members`, { user_id: member.id }), 201);
    expectOk(await admin.post(`/api/v1/channels/${channel.id}/messages`, { content: 'before' }), 201);
    const onB = new Client(b.url, member.api_key);
    const read = () => onB.get(`/api/v1/channels/${channel.id}/messages`);
    for (let i = 0; i < 3; i++) expectOk(await read()); // access cached on B
    redis.pause();
    expect((await admin.delete(`/api/v1/channels/${channel.id}/members/${member.id}`)).status).to.equal(204);
    expectOk(await admin.post(`/api/v1/channels/${channel.id}/messages`, { content: 'after the removal' }), 201);
    const ms = await refusedWithin(read, 404, 'the removed member reading on the other replica');
    for (let i = 0; i < 5; i++) expectError(await read(), 404, 'not_found');
    console.log(`      hidden on the other replica ${ms} ms after the removal (bound ${STALE_AFTER_MS} ms)`);
  });
});
