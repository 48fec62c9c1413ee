// Rate limits counted exactly across replicas (shared/http/rate-limit.ts), and
// requests with a made-up Bearer token counted against the client address.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { consume, createLimiter } from '../../shared/http/rate-limit.js';
import { freePort } from '../../shared/embedded.js';
import { Client } from '../support/client.js';
import { expectError, expectOk } from '../support/expect.js';
import { processEnv, startProcess, type RunningProcess } from '../support/stack-process.js';
import { separateStack } from '../support/separate-stack.js';
import { deleteRedisKeys, newWorkspace, testEnv, type TestEnv } from '../support/stack.js';

const REDIS_URL = 'redis://127.0.0.1:6379';

describe('rate limiter (shared/http/rate-limit.ts)', () => {
  const prefix = `axidtest:rl-${process.pid}-${randomBytes(4).toString('hex')}`;
  const connections: Redis[] = [];
  const connect = (url = REDIS_URL, o: { retry?: boolean } = {}) => {
    const r = new Redis(url, { maxRetriesPerRequest: null, ...(o.retry === false ? { retryStrategy: () => 200 } : {}) });
    r.on('error', () => undefined);
    connections.push(r);
    return r;
  };
  after(async () => {
    for (const r of connections) r.disconnect();
    await deleteRedisKeys(prefix);
  });

  it('lets two replicas together accept exactly the limit, Remaining falling by one per request', async () => {
    const replicas = [];
    for (const redis of [connect(), connect()]) {
      await redis.ping(); // connected: the limiter asks Redis only over a ready connection
      replicas.push(createLimiter({ redis, keyPrefix: prefix, points: 25, duration: 60 }));
    }
    const verdicts = [];
    for (let i = 0; i < 40; i++) verdicts.push(await consume(replicas[i % 2]!, 'key:a'));
    const accepted = verdicts.filter((v) => v.allowed);
    expect(accepted).to.have.length(25);
    expect(accepted.map((v) => v.remaining)).to.deep.equal(Array.from({ length: 25 }, (_, i) => 24 - i));
    expect(verdicts.slice(25).every((v) => !v.allowed && v.remaining === 0)).to.equal(true);
  });

  it('keeps refusing an exhausted key from memory, without asking Redis', async () => {
    const redis = connect();
    await redis.ping();
    const limiter = createLimiter({ redis, keyPrefix: prefix, points: 3, duration: 60 });
    for (let i = 0; i < 3; i++) expect((await consume(limiter, 'key:b')).allowed).to.equal(true);
    // Were Redis asked, this would start a fresh window.
    await redis.del(`${prefix}:key:b`);
    expect((await consume(limiter, 'key:b')).allowed).to.equal(false);
    expect(await redis.exists(`${prefix}:key:b`)).to.equal(0);
  });

  it('counts in memory at once while Redis is unreachable, instead of waiting for it', async () => {
    const nowhere = connect(`redis://127.0.0.1:${await freePort()}`, { retry: false });
    const limiter = createLimiter({ redis: nowhere, keyPrefix: prefix, points: 2, duration: 60 });
    const verdicts = [await consume(limiter, 'key:c'), await consume(limiter, 'key:c'), await consume(limiter, 'key:c')];
    expect(verdicts.map((v) => [v.allowed, v.remaining])).to.deep.equal([
      [true, 1],
      [true, 0],
      [false, 0],
    ]);
  });
});

describe('rate limiting of requests with an unknown Bearer token', () => {
  let s: Awaited<ReturnType<typeof separateStack>>;
  before(async () => {
    s = await separateStack({ RATE_LIMIT_POINTS: '5', RATE_LIMIT_DURATION: '60' });
  });
  after(async () => s.stop());

  it('counts them against the client address (429 once it is used up) and leaves no Redis key per token', async () => {
    const ws = await newWorkspace(s.stack);
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await new Client(s.stack.url, `axid_${randomBytes(32).toString('base64url')}`).get('/api/v1/users/me');
      statuses.push(res.status);
    }
    expect(statuses).to.deep.equal([401, 401, 401, 401, 401, 429, 429, 429]);
    const redis = new Redis(s.env.config.redisUrl);
    try {
      const found = await redis.keys(`${s.env.config.redisKeyPrefix}rl:*`);
      expect(found.map((k) => k.slice(`${s.env.config.redisKeyPrefix}rl:`.length).replace(/:.*$/, ''))).to.deep.equal(['ip']);
    } finally {
      redis.disconnect();
    }
    // A valid key has its own budget, untouched by the made-up ones.
    const ok = await ws.owner.get('/api/v1/users/me');
    expectOk(ok);
    expect(ok.headers.get('x-ratelimit-remaining')).to.equal('4');
    expectError(await new Client(s.stack.url).get('/api/v1/users/me'), 429, 'rate_limited');
  });
});

describe('rate limits across two API processes', function () {
  this.timeout(120_000);
  const key = randomBytes(32).toString('base64url');
  let env: TestEnv;
  const procs: RunningProcess[] = [];

  before(async () => {
    env = testEnv();
    const base = processEnv(env, { BOOTSTRAP_ADMIN_KEY: key, RATE_LIMIT_POINTS: '40', LOG_LEVEL: 'warn', ROLES: 'api' });
    procs.push(await startProcess(base));
    procs.push(await startProcess(base));
  });

  after(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    await env?.cleanup();
  });

  it('accepts exactly the limit in total, Remaining strictly falling whichever process answers', async () => {
    const clients = procs.map((p) => new Client(p.url, key));
    const remaining: number[] = [];
    let accepted = 0;
    let refused = 0;
    for (let i = 0; i < 60; i++) {
      const res = await clients[i % 2]!.get('/api/v1/users/me');
      if (res.status === 200) {
        accepted++;
        remaining.push(Number(res.headers.get('x-ratelimit-remaining')));
      } else {
        expectError(res, 429, 'rate_limited');
        refused++;
      }
    }
    expect(accepted).to.equal(40);
    expect(refused).to.equal(20);
    expect(remaining).to.deep.equal(Array.from({ length: 40 }, (_, i) => 39 - i));
  });
});
