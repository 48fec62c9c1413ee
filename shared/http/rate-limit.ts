// Rate limits (contract §5): RATE_LIMIT_POINTS requests per key per window of
// RATE_LIMIT_DURATION seconds, shared by every replica through Redis.
//
// Each process decides on its own, from its own count plus the other
// replicas' counts as of the last sync, and sends what it counted to Redis
// every SYNC_MS (one INCRBY per active key, all in one pipeline), so a request
// never waits for Redis. Asking Redis on every request (an EVAL through
// rate-limiter-flexible's RateLimiterRedis) cost about 150 µs of API CPU per
// request, a third of a post. The price: replicas together may let through,
// beyond the limit, what they accept within one SYNC_MS; one process counts
// exactly. Windows are aligned to the clock, so replicas agree on them without
// talking. While Redis is away each process counts alone and sends its counts
// once Redis is back.
import type { Next } from 'koa';
import { bearerToken, hashKey } from '../auth.js';
import { AppError } from '../errors.js';
import { keys, type Redis } from '../redis.js';
import type { Runtime } from '../runtime.js';
import type { AppContext } from './context.js';

const SYNC_MS = 50;

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

/** One key's count in the current window. */
interface Window {
  index: number;
  /** Counted by this process. */
  own: number;
  /** Counted by this process and not yet sent to Redis. */
  unsent: number;
  /** Counted by the other replicas, as of the last sync. */
  others: number;
}

export interface Verdict {
  allowed: boolean;
  remaining: number;
  /** When the window ends (ms since the epoch). */
  resetAt: number;
}

export class SharedRateLimiter {
  private readonly windows = new Map<string, Window>();
  private timer: NodeJS.Timeout | null = null;
  private syncing = false;
  private stopped = false;

  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
    readonly points: number,
    private readonly windowMs: number,
  ) {}

  /** Counts one request against key (a refused one is not counted). */
  consume(key: string, now = Date.now()): Verdict {
    const index = Math.floor(now / this.windowMs);
    let w = this.windows.get(key);
    if (!w || w.index !== index) this.windows.set(key, (w = { index, own: 0, unsent: 0, others: 0 }));
    const used = w.own + w.others;
    const resetAt = (index + 1) * this.windowMs;
    if (used >= this.points) return { allowed: false, remaining: 0, resetAt };
    w.own++;
    w.unsent++;
    this.syncSoon();
    return { allowed: true, remaining: this.points - used - 1, resetAt };
  }

  /** Stops syncing (shutdown); counts not yet sent are dropped with the process. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private syncSoon(): void {
    if (this.timer || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.sync();
    }, SYNC_MS);
    this.timer.unref();
  }

  /** Sends each key's new count; INCRBY answers the window's total, which gives the others' count. */
  private async sync(): Promise<void> {
    const current = Math.floor(Date.now() / this.windowMs);
    for (const [key, w] of this.windows) if (w.index < current) this.windows.delete(key);
    const batch = [...this.windows].filter(([, w]) => w.unsent > 0);
    if (batch.length === 0) return;
    // Not while Redis is away: commands would wait in ioredis's offline queue.
    if (this.syncing || this.redis.status !== 'ready') return this.syncSoon();
    this.syncing = true;
    const sent = batch.map(([, w]) => w.unsent);
    const pipeline = this.redis.pipeline();
    for (const [key, w] of batch) {
      const redisKey = `${this.keyPrefix}${key}:${w.index}`;
      pipeline.incrby(redisKey, w.unsent).pexpireat(redisKey, (w.index + 2) * this.windowMs);
      w.unsent = 0;
    }
    const results = await pipeline.exec().catch(() => null);
    this.syncing = false;
    batch.forEach(([, w], i) => {
      const [err, total] = results?.[i * 2] ?? [new Error('no reply')];
      if (err) {
        w.unsent += sent[i]!; // sent again with the next sync
        return;
      }
      // The total holds every replica's sent counts, ours included.
      w.others = Math.max(w.others, Number(total) - (w.own - w.unsent));
    });
    if (batch.some(([, w]) => w.unsent > 0)) this.syncSoon();
  }
}

/** The middleware: counts every request but the ops endpoints (mounted before it). */
export function rateLimit(rt: Runtime) {
  const { points, duration } = rt.config.rateLimit;
  const limiter = new SharedRateLimiter(rt.redis, keys(rt.config.redisKeyPrefix).rateLimit, points, duration * 1000);

  const middleware = async function rateLimitMiddleware(ctx: AppContext, next: Next): Promise<void> {
    const now = Date.now();
    const verdict = limiter.consume(rateLimitKey(ctx), now);
    const headers = {
      'X-RateLimit-Limit': String(points),
      'X-RateLimit-Remaining': String(verdict.remaining),
      'X-RateLimit-Reset': String(Math.ceil(verdict.resetAt / 1000)),
    };
    ctx.set(headers);
    if (!verdict.allowed) {
      rt.metrics.rateLimited.inc();
      const retryAfter = Math.max(1, Math.ceil((verdict.resetAt - now) / 1000));
      throw new AppError('rate_limited', `rate limit reached: retry after ${retryAfter} s`, {
        ...headers,
        'Retry-After': String(retryAfter),
      });
    }
    await next();
  };
  return Object.assign(middleware, { stop: () => limiter.stop() });
}
