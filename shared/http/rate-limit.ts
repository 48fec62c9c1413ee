// Rate limits: RATE_LIMIT_POINTS requests per key per window of
// RATE_LIMIT_DURATION seconds, counted exactly across every replica.
//
// Each request is one atomic round trip to Redis (rate-limiter-flexible's
// RateLimiterRedis: INCR and PEXPIRE in one script on the shared command
// connection), so N replicas together accept at most the limit and
// X-RateLimit-Remaining falls by one per request whichever replica answers.
// A key that used up its window is blocked in this process's memory until the
// window ends (inMemoryBlockOnConsumed): its further requests never reach Redis.
// While Redis is away (the connection is not ready, or does not answer:
// shared/redis.ts `answering`), each process counts in memory (the insurance
// limiter) instead of waiting in ioredis's offline queue or a command's bound.
//
// Who a request counts against: its API key once the key is verified, the
// webhook it posts to if that hook takes posts, or else the client address. A
// Bearer token that is not a valid key, or a hook id that names no hook,
// counts against the address, so rotating made-up tokens or hook ids neither
// escapes the limit nor leaves a Redis key each.
import type { Next } from 'koa';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { authenticate, bearerToken, cachedActor } from '../auth.js';
import { AppError } from '../errors.js';
import { answering, keys, type Redis } from '../redis.js';
import type { Runtime } from '../runtime.js';
import type { AppContext } from './context.js';

export interface LimiterOptions {
  redis: Redis;
  keyPrefix: string;
  points: number;
  /** Window, in seconds. */
  duration: number;
  /** Consumed points from which a key is blocked in this process's memory (default: `points`; 0: never). */
  inMemoryBlockOnConsumed?: number;
}

/** `inMemory`: the insurance limiter, counting while Redis is away (given when the caller uses it directly too). */
export function createLimiter(o: LimiterOptions, inMemory = new RateLimiterMemory({ keyPrefix: o.keyPrefix, points: o.points, duration: o.duration })): RateLimiterRedis {
  return new RateLimiterRedis({
    storeClient: o.redis,
    keyPrefix: o.keyPrefix,
    points: o.points,
    duration: o.duration,
    inMemoryBlockOnConsumed: o.inMemoryBlockOnConsumed ?? o.points,
    rejectIfRedisNotReady: true,
    insuranceLimiter: inMemory,
  });
}

export interface Verdict {
  allowed: boolean;
  remaining: number;
  /** When the window ends (ms since the epoch). */
  resetAt: number;
}

/** Counts one request against key. */
export async function consume(limiter: RateLimiterAbstract, key: string): Promise<Verdict> {
  const now = Date.now();
  try {
    const res = await limiter.consume(key);
    return { allowed: true, remaining: res.remainingPoints, resetAt: now + res.msBeforeNext };
  } catch (err) {
    if (!(err instanceof RateLimiterRes)) throw err;
    return { allowed: false, remaining: 0, resetAt: now + err.msBeforeNext };
  }
}

/**
 * The key a request counts against. A Bearer token is verified first (the
 * access cache usually answers without Postgres); the caller is kept on the
 * context for the route, and a refusal is kept too and thrown by the route
 * that needs a key (a public route ignores a stray Authorization header).
 */
/** Whether a webhook id names a hook that takes posts (the API role's; services/core/webhooks). */
export type HookCheck = (rt: Runtime, webhookId: string) => Promise<boolean>;

export async function rateLimitKey(ctx: AppContext, hookTakesPosts?: HookCheck): Promise<string> {
  const token = bearerToken(ctx.get('authorization'));
  if (token) {
    const { rt } = ctx.state;
    try {
      ctx.state.actor = cachedActor(token, rt.access) ?? (await authenticate(rt.db, token, rt.access));
      return `key:${ctx.state.actor.keyId}`;
    } catch (err) {
      if (!(err instanceof AppError) || err.status !== 401) throw err;
      ctx.state.authFailure = err;
    }
  }
  const hook = /^\/hooks\/(?:compat\/)?([^/]+)/.exec(ctx.path);
  if (hook && !ctx.state.authFailure && hookTakesPosts && (await hookTakesPosts(ctx.state.rt, hook[1]!))) return `hook:${hook[1]}`;
  return `ip:${ctx.ip}`;
}

/** The middleware: counts every request but the ops endpoints (mounted before it). */
export function rateLimit(rt: Runtime, hookTakesPosts?: HookCheck) {
  const { points, duration } = rt.config.rateLimit;
  const keyPrefix = keys(rt.config.redisKeyPrefix).rateLimit;
  // While Redis does not answer (paused: the connection stays ready), straight to memory.
  const inMemory = new RateLimiterMemory({ keyPrefix, points, duration });
  const limiter = createLimiter({ redis: rt.redis, keyPrefix, points, duration }, inMemory);

  return async function rateLimitMiddleware(ctx: AppContext, next: Next): Promise<void> {
    const verdict = await consume(answering(rt.redis) ? limiter : inMemory, await rateLimitKey(ctx, hookTakesPosts));
    const headers = {
      'X-RateLimit-Limit': String(points),
      'X-RateLimit-Remaining': String(verdict.remaining),
      'X-RateLimit-Reset': String(Math.ceil(verdict.resetAt / 1000)),
    };
    ctx.set(headers);
    if (!verdict.allowed) {
      rt.metrics.rateLimited.inc();
      const retryAfter = Math.max(1, Math.ceil((verdict.resetAt - Date.now()) / 1000));
      throw new AppError('rate_limited', `rate limit reached: retry after ${retryAfter} s`, {
        ...headers,
        'Retry-After': String(retryAfter),
      });
    }
    await next();
  };
}
