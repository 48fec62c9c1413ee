import type { Next } from 'koa';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { bearerToken, hashKey } from '../auth.js';
import { AppError } from '../errors.js';
import type { Runtime } from '../runtime.js';
import type { AppContext } from './context.js';

/**
 * Who a request counts against (contract §5): its API key, the webhook it
 * posts to, or else the client address.
 */
export function rateLimitKey(ctx: AppContext): string {
  const token = bearerToken(ctx.get('authorization'));
  if (token) return `key:${hashKey(token)}`;
  const hook = /^\/hooks\/(?:compat\/)?([^/]+)/.exec(ctx.path);
  if (hook) return `hook:${hook[1]}`;
  return `ip:${ctx.ip}`;
}

/** Counts every request in Redis (shared by replicas); memory if Redis is away. */
export function rateLimit(rt: Runtime) {
  const { points, duration } = rt.config.rateLimit;
  const limiter = new RateLimiterRedis({
    storeClient: rt.redis,
    keyPrefix: `${rt.config.redisKeyPrefix}rl`,
    points,
    duration,
    // A Redis blip must not turn into an outage: count locally meanwhile.
    // Without rejectIfRedisNotReady a command would wait in ioredis's offline
    // queue (maxRetriesPerRequest: null) and the request would hang until Redis returns.
    rejectIfRedisNotReady: true,
    insuranceLimiter: new RateLimiterMemory({ points, duration }),
  });

  return async function rateLimitMiddleware(ctx: AppContext, next: Next): Promise<void> {
    let res: RateLimiterRes;
    let refused = false;
    try {
      res = await limiter.consume(rateLimitKey(ctx));
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      res = err;
      refused = true;
    }
    const resetSeconds = Math.ceil((Date.now() + res.msBeforeNext) / 1000);
    const headers = {
      'X-RateLimit-Limit': String(points),
      'X-RateLimit-Remaining': String(Math.max(0, res.remainingPoints)),
      'X-RateLimit-Reset': String(resetSeconds),
    };
    ctx.set(headers);
    if (refused) {
      rt.metrics.rateLimited.inc();
      const retryAfter = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
      throw new AppError('rate_limited', `rate limit reached: retry after ${retryAfter} s`, {
        ...headers,
        'Retry-After': String(retryAfter),
      });
    }
    await next();
  };
}
