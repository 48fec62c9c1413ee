import { expect } from 'chai';
import { startStack, type Stack } from '../../services/stack.js';
import { createLogger } from '../../shared/logger.js';
import { openRaw, type RawStream } from '../support/sse.js';
import { PrivateRedis } from '../support/private-redis.js';
import { newWorkspace, testEnv, uniqueName, type TestEnv } from '../support/stack.js';

describe('GET /api/v1/stream across a Redis outage', function () {
  this.timeout(60_000);
  let redis: PrivateRedis;
  let env: TestEnv;
  let s: Stack;
  let stream: RawStream | undefined;

  before(async () => {
    redis = await PrivateRedis.start();
    env = testEnv({ REDIS_URL: redis.url });
    s = await startStack(env.config, createLogger(env.config.logLevel));
  });

  after(async () => {
    stream?.close();
    await redis?.up().catch(() => undefined); // back up if the test stopped half way, so that close() does not wait for it
    await s?.close();
    await env?.cleanup();
    await redis?.stop();
  });

  it('keeps answering writes while Redis is down and delivers every committed change to a client that stayed connected', async () => {
    const ws = await newWorkspace(s);
    stream = await openRaw(s.url, ws.ownerKey);
    const first = await ws.user();
    await stream.waitFor((f) => f.event === 'user.created' && f.data.user.id === first.id);

    await redis.down();
    const during: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await ws.owner.post('/api/v1/users', { name: uniqueName('outage') });
      expect(res.status, res.text).to.equal(201);
      expect(res.headers.get('x-ratelimit-limit')).to.match(/^\d+$/);
      during.push(res.body.data.id);
    }
    const patched = await ws.owner.patch(`/api/v1/workspaces/current/members/${first.id}`, { role: 'admin' });
    expect(patched.status, patched.text).to.equal(200);

    await redis.up();
    const after = await ws.user();
    const got = await stream.waitForCount((f) => f.event === 'user.created' || f.event === 'member.updated', 8, 30_000);
    expect(got.map((f) => f.data.user.id)).to.deep.equal([first.id, ...during, first.id, after.id]);
    expect(got.map((f) => f.event)).to.deep.equal([...Array(6).fill('user.created'), 'member.updated', 'user.created']);
    expect(stream.isEnded()).to.equal(false);
  });
});
