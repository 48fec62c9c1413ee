// `@here` asks presence, which lives in Redis (contract §14; docs/team-chat.md):
// while Redis is down a post with `@here` answers 503 with Retry-After at once
// instead of waiting, and writes nothing; every other post, `@channel` and
// `@name` included, goes on as before. A private Redis, stopped and started here.
import { expect } from 'chai';
import { startStack, type Stack } from '../../services/stack.js';
import { createLogger } from '../../shared/logger.js';
import { serverLevels } from '../support/client.js';
import { expectError, expectOk } from '../support/expect.js';
import { PrivateRedis } from '../support/private-redis.js';
import { newWorkspace, testEnv, uniqueName, type TestEnv } from '../support/stack.js';

describe('@here while Redis is down (level 3)', function () {
  this.timeout(60_000);
  let redis: PrivateRedis;
  let env: TestEnv;
  let s: Stack;

  before(async () => {
    redis = await PrivateRedis.start();
    env = testEnv({ REDIS_URL: redis.url, FEATURE_LEVEL: '3' });
    s = await startStack(env.config, createLogger(env.config.logLevel));
    serverLevels.set(s.url, '3');
  });

  after(async () => {
    serverLevels.delete(s?.url);
    redis?.resume();
    await s?.close();
    await env?.cleanup();
    await redis?.stop();
  });

  it('answers 503 with Retry-After to @here within seconds, writing nothing; other mentions post', async () => {
    const ws = await newWorkspace(s);
    const name = uniqueName('pat');
    const pat = await ws.user({ name });
    const ch = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('here') }), 201).data;
    expectOk(await ws.owner.post(`/api/v1/channels/${ch.id}/members`, { user_id: pat.id }), 201);
    const base = `/api/v1/channels/${ch.id}/messages`;

    // Paused (SIGSTOP), the harder case: Redis takes the connection and never answers.
    redis.pause();
    const started = Date.now();
    const res = await ws.owner.post(base, { content: 'is anyone @here?' });
    expect(Date.now() - started).to.be.below(5_000);
    expectError(res, 503, 'service_unavailable');
    expect(res.headers.get('retry-after')).to.match(/^[1-9]\d*$/);
    const other = expectOk(await ws.owner.post(base, { content: `@channel and @${name}` }), 201).data;
    expect(other.mentioned_user_ids).to.include(pat.id);
    redis.resume();
    const contents = expectOk(await ws.owner.get(base)).data.map((m: { content: string }) => m.content);
    expect(contents).to.deep.equal([`@channel and @${name}`]);
  });
});
