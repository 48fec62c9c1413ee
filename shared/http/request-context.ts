import { randomUUID } from 'node:crypto';
import type { Next } from 'koa';
import type { Runtime } from '../runtime.js';
import { tracing } from '../tracing.js';
import type { AppContext } from './context.js';

/** Outermost middleware: request id, the feature-level header, access log and metrics. */
export function requestContext(rt: Runtime) {
  // Decided once: building the log line costs something on every request.
  const accessLog = rt.log.isLevelEnabled('debug');
  const featureLevel = String(rt.config.featureLevel);
  // The metric series of each method, route and status, looked up once: prom-client
  // otherwise hashes the label object on every request (two lookups per request).
  const series = new Map<string, { count: { inc(): void }; duration: { observe(seconds: number): void } }>();
  const seriesOf = (method: string, route: string, status: string) => {
    const key = `${method} ${status} ${route}`;
    let found = series.get(key);
    if (!found) {
      const labels = { method, route, status };
      found = { count: rt.metrics.httpRequests.labels(labels), duration: rt.metrics.httpDuration.labels(labels) };
      series.set(key, found);
    }
    return found;
  };
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
      const route = ctx.state.route ?? 'unmatched';
      const status = String(ctx.status);
      const metric = seriesOf(ctx.method, route, status);
      metric.count.inc();
      metric.duration.observe(seconds);
      if (tracing) tracing.nameRequest(ctx.method, route);
      if (accessLog) rt.log.debug({ req_id: ctx.state.requestId, method: ctx.method, route, status, ms: Math.round(seconds * 1000) }, 'request');
    }
  };
}
