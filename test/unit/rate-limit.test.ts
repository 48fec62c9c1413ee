// The rate limiter (shared/http/rate-limit.ts) without I/O: verdicts, keys and
// the middleware's headers and refusal, on a Redis connection that is not
// ready (so rate-limiter-flexible counts in its in-memory insurance limiter,
// as it does while Redis is away). Exact counting across replicas through Redis:
// test/processes/rate-limit.test.ts.
import { expect } from 'chai';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { AppError } from '../../shared/errors.js';
import type { AppContext } from '../../shared/http/context.js';
import { consume, createLimiter, rateLimit, rateLimitKey } from '../../shared/http/rate-limit.js';
import { createMetrics } from '../../shared/metrics.js';
import type { Redis } from '../../shared/redis.js';
import type { Runtime } from '../../shared/runtime.js';

describe('rate limiter', () => {
  // What rate-limiter-flexible reads of an ioredis client: a status other
  // than 'ready' sends every consume to the insurance limiter.
  const redis = { status: 'reconnecting' } as unknown as Redis;

  const limiter = (points: number) => createLimiter({ redis, keyPrefix: `unit:${Math.random()}`, points, duration: 60 });

  describe('consume', () => {
    it('allows `points` requests per key with Remaining falling to 0, then refuses until the window ends', async () => {
      const l = limiter(3);
      const before = Date.now();
      const verdicts = [];
      for (let i = 0; i < 4; i++) verdicts.push(await consume(l, 'ip:1'));
      expect(verdicts.map((v) => [v.allowed, v.remaining])).to.deep.equal([
        [true, 2],
        [true, 1],
        [true, 0],
        [false, 0],
      ]);
      const refused = verdicts[3]!;
      expect(refused.resetAt).to.be.greaterThan(before).and.at.most(Date.now() + 60_000);
    });

    it('counts each key on its own', async () => {
      const l = limiter(1);
      expect((await consume(l, 'key:a')).allowed).to.equal(true);
      expect((await consume(l, 'key:a')).allowed).to.equal(false);
      expect((await consume(l, 'key:b')).allowed).to.equal(true);
    });

    it('passes on an error that is not a refusal', async () => {
      const broken = { consume: () => Promise.reject(new Error('store broke')) } as unknown as RateLimiterRedis;
      let caught: unknown;
      await consume(broken, 'ip:1').catch((err) => (caught = err));
      expect((caught as Error).message).to.equal('store broke');
    });
  });

  describe('rateLimitKey', () => {
    const ctx = (path: string, state: Partial<AppContext['state']> = {}) =>
      ({ path, ip: '10.0.0.7', get: () => '', state }) as unknown as AppContext;

    it('counts a request without a key against the client address', async () => {
      expect(await rateLimitKey(ctx('/api/v1/channels'))).to.equal('ip:10.0.0.7');
    });

    const takesPosts = async (_rt: unknown, id: string) => id === 'abc123';

    it('counts a post to a hook that takes posts against the hook, both addresses', async () => {
      expect(await rateLimitKey(ctx('/hooks/abc123'), takesPosts)).to.equal('hook:abc123');
      expect(await rateLimitKey(ctx('/hooks/compat/abc123'), takesPosts)).to.equal('hook:abc123');
    });

    it('counts a post to a made-up hook id against the address', async () => {
      expect(await rateLimitKey(ctx('/hooks/made-up'), takesPosts)).to.equal('ip:10.0.0.7');
      expect(await rateLimitKey(ctx('/hooks/compat/made-up'), takesPosts)).to.equal('ip:10.0.0.7');
      // a process without the API role has no hooks
      expect(await rateLimitKey(ctx('/hooks/abc123'))).to.equal('ip:10.0.0.7');
    });

    it('counts a hook post with a refused token against the address', async () => {
      expect(await rateLimitKey(ctx('/hooks/abc123', { authFailure: new Error('401') }), takesPosts)).to.equal('ip:10.0.0.7');
    });
  });

  describe('middleware', () => {
    function fakeRuntime(points: number) {
      const metrics = createMetrics();
      const rt = { config: { rateLimit: { points, duration: 60 }, redisKeyPrefix: `unit:${Math.random()}:` }, redis, metrics };
      return rt as unknown as Runtime;
    }
    const request = () => {
      const headers: Record<string, string> = {};
      const ctx = { path: '/api/v1/channels', ip: '10.0.0.8', get: () => '', state: {}, set: (h: Record<string, string>) => Object.assign(headers, h) };
      return { ctx: ctx as unknown as AppContext, headers };
    };

    it('sets the limit headers, lets requests through while allowed, then refuses with rate_limited and Retry-After', async () => {
      const rt = fakeRuntime(2);
      const middleware = rateLimit(rt);
      let passed = 0;
      const next = async () => void passed++;

      const first = request();
      await middleware(first.ctx, next);
      expect(first.headers['X-RateLimit-Limit']).to.equal('2');
      expect(first.headers['X-RateLimit-Remaining']).to.equal('1');
      expect(Number(first.headers['X-RateLimit-Reset'])).to.be.closeTo(Date.now() / 1000 + 60, 2);
      await middleware(request().ctx, next);
      expect(passed).to.equal(2);

      const third = request();
      let refusal: unknown;
      await middleware(third.ctx, next).catch((err) => (refusal = err));
      expect(passed).to.equal(2);
      expect(refusal).to.be.instanceOf(AppError);
      const err = refusal as AppError;
      expect(err.code).to.equal('rate_limited');
      expect(err.message).to.match(/retry after \d+ s/);
      expect(Number(err.headers['Retry-After'])).to.be.within(1, 60);
      expect(err.status).to.equal(429);
      expect(third.headers['X-RateLimit-Remaining']).to.equal('0');
      const counted = await rt.metrics.rateLimited.get();
      expect(counted.values[0]?.value).to.equal(1);
    });
  });
});
