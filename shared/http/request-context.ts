import { randomUUID } from 'node:crypto';
import type { Next } from 'koa';
import type { Runtime } from '../runtime.js';
import type { AppContext } from './context.js';

/** Outermost middleware: request id, the feature-level header, access log and metrics. */
export function requestContext(rt: Runtime) {
  // Decided once: building the log line costs something on every request.
  const accessLog = rt.log.isLevelEnabled('debug');
  const featureLevel = String(rt.config.featureLevel);
  return async function requestContextMiddleware(ctx: AppContext, next: Next): Promise<void> {
    const started = process.hrtime.bigint();
    const incoming = ctx.get('x-request-id');
    ctx.state.rt = rt;
    ctx.state.requestId = /^[A-Za-z0-9_-]{8,64}$/.test(incoming) ? incoming : randomUUID();
    ctx.set('X-Service-Feature-Level', featureLevel);
    ctx.set('X-Request-Id', ctx.state.requestId);
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const labels = { method: ctx.method, route: ctx.state.route ?? 'unmatched', status: String(ctx.status) };
      rt.metrics.httpRequests.inc(labels);
      rt.metrics.httpDuration.observe(labels, seconds);
      if (accessLog) rt.log.debug({ req_id: ctx.state.requestId, ...labels, ms: Math.round(seconds * 1000) }, 'request');
    }
  };
}
