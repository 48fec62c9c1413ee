import type { Next } from 'koa';
import { RETRY_AFTER_UNAVAILABLE_S } from '../errors.js';
import type { AppContext } from './context.js';

/** /healthz, /readyz and /metrics on every role; not rate limited. */
export async function opsRoutes(ctx: AppContext, next: Next): Promise<void> {
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
  const { rt } = ctx.state;
  switch (ctx.path) {
    case '/healthz':
      ctx.state.route = ctx.path;
      ctx.body = { status: 'ok' };
      return;
    case '/readyz': {
      ctx.state.route = ctx.path;
      const ready = await rt.ready();
      ctx.status = ready ? 200 : 503;
      if (!ready) ctx.set('Retry-After', String(RETRY_AFTER_UNAVAILABLE_S));
      ctx.body = { status: ready ? 'ready' : 'unavailable' };
      return;
    }
    case '/metrics':
      ctx.state.route = ctx.path;
      ctx.type = rt.metrics.registry.contentType;
      ctx.body = await rt.metrics.registry.metrics();
      return;
    default:
      return next();
  }
}
