import type { Next } from 'koa';
import type { AppContext } from '../../shared/http/context.js';
import type { Runtime } from '../../shared/runtime.js';

// Placeholder until the realtime issue lands: the stream route answers 501.
export function createGateway(_rt: Runtime, _o: { databaseUrl: string; redisUrl: string }) {
  return {
    async middleware(ctx: AppContext, next: Next) {
      if (ctx.path !== '/api/v1/stream') return next();
      ctx.status = 501;
      ctx.body = { error: { code: 'not_implemented', message: 'the stream is not available yet' } };
    },
    async close() {},
  };
}
