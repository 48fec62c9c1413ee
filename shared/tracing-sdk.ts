// The OpenTelemetry side of shared/tracing.ts, imported only when traces are
// asked for. The SDK (NodeSDK) reads the standard OTEL_* variables itself:
// the endpoint, OTEL_EXPORTER_OTLP_PROTOCOL (http/protobuf by default,
// http/json, grpc), headers, OTEL_TRACES_SAMPLER, OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES. Metrics and logs stay where they are (/metrics,
// stdout) unless their OTEL_*_EXPORTER says otherwise.
//
// What a span may carry: route templates, SQL without values, Redis command
// names, event types and ids; never message text, a key or a hook id. A
// request's path (a hook's URL is its secret) becomes its route template,
// an outgoing request's URL its origin, a Redis command its name alone.
import { register } from 'node:module';
import type { ClientRequest } from 'node:http';
import type { Tracing, TraceCarrier, SpanKind as Kind, SpanAttributes } from './tracing.js';

/** The packages the instrumentations patch, hooked in ESM (import-in-the-middle); everything else loads untouched. */
const INSTRUMENTED = ['http', 'https', 'node:http', 'node:https', 'koa', 'pg', 'pg-pool', 'ioredis'];
/** Scraped and probed all day: no trace each. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);
/** URL attributes of the semantic conventions, old and stable. */
const PATH_ATTRIBUTES = ['url.path', 'http.target'];
const FULL_URL_ATTRIBUTES = ['url.full', 'http.url'];
const QUERY_ATTRIBUTES = ['url.query'];

export async function startSdk(serviceName: string): Promise<Tracing> {
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url, { data: { include: INSTRUMENTED } });
  const api = await import('@opentelemetry/api');
  const { NodeSDK } = await import('@opentelemetry/sdk-node');
  const { HttpInstrumentation } = await import('@opentelemetry/instrumentation-http');
  const { KoaInstrumentation, KoaLayerType } = await import('@opentelemetry/instrumentation-koa');
  const { PgInstrumentation } = await import('@opentelemetry/instrumentation-pg');
  const { IORedisInstrumentation } = await import('@opentelemetry/instrumentation-ioredis');
  const { context, propagation, trace, ROOT_CONTEXT, SpanKind, SpanStatusCode } = api;

  process.env.OTEL_METRICS_EXPORTER ??= 'none';
  process.env.OTEL_LOGS_EXPORTER ??= 'none';

  /** Overwrites the attributes among `keys` a span has (the SDK's spans show theirs) with `value`. */
  const overwrite = (span: unknown, keys: string[], value: string) => {
    const s = span as { attributes?: Record<string, unknown>; setAttribute(key: string, value: string): unknown };
    for (const key of keys) if (key in (s.attributes ?? {})) s.setAttribute(key, value);
  };

  const sdk = new NodeSDK({
    ...(process.env.OTEL_SERVICE_NAME ? {} : { serviceName }),
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => UNTRACED_PATHS.has((req.url ?? '').split('?')[0]!),
        requireParentforOutgoingSpans: true,
        // Called as the span ends: a server span's URL is set by nameRequest
        // (its route template); an outgoing one keeps its origin only.
        applyCustomAttributesOnSpan(span, request) {
          if ('headers' in request) return; // an incoming request (IncomingMessage), not an outgoing one
          const out = request as ClientRequest;
          overwrite(span, FULL_URL_ATTRIBUTES, `${out.protocol}//${out.host}`);
          overwrite(span, PATH_ATTRIBUTES, '/');
          overwrite(span, QUERY_ATTRIBUTES, '');
        },
      }),
      // Router layers only: a span per middleware says nothing a request's span does not.
      new KoaInstrumentation({ ignoreLayersType: [KoaLayerType.MIDDLEWARE] }),
      new PgInstrumentation({ requireParentSpan: true }),
      // The command's name only: arguments hold events (message text) and keys.
      new IORedisInstrumentation({ requireParentSpan: true, dbStatementSerializer: (command) => command }),
    ],
  });
  sdk.start();

  const kinds: Record<Kind, number> = {
    internal: SpanKind.INTERNAL,
    producer: SpanKind.PRODUCER,
    consumer: SpanKind.CONSUMER,
    client: SpanKind.CLIENT,
    server: SpanKind.SERVER,
  };
  const tracer = trace.getTracer('axid');

  const parentContext = (parent: TraceCarrier | undefined) => {
    if (parent === undefined) return context.active();
    const newline = parent.indexOf('\n');
    const carrier = newline < 0 ? { traceparent: parent } : { traceparent: parent.slice(0, newline), tracestate: parent.slice(newline + 1) };
    return propagation.extract(ROOT_CONTEXT, carrier);
  };
  const carrierOf = (ctx: ReturnType<typeof context.active>): TraceCarrier | undefined => {
    const carrier: { traceparent?: string; tracestate?: string } = {};
    propagation.inject(ctx, carrier);
    if (!carrier.traceparent) return undefined;
    return carrier.tracestate ? `${carrier.traceparent}\n${carrier.tracestate}` : carrier.traceparent;
  };
  const fail = (span: ReturnType<typeof tracer.startSpan>, error: unknown) => {
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : 'error' });
  };

  return {
    active: () => carrierOf(context.active()),
    start(name, kind, parent, attributes) {
      const parentCtx = parentContext(parent);
      const span = tracer.startSpan(name, { kind: kinds[kind], ...(attributes ? { attributes } : {}) }, parentCtx);
      return {
        carrier: carrierOf(trace.setSpan(parentCtx, span)) ?? '',
        end(error?: unknown) {
          if (error !== undefined) fail(span, error);
          span.end();
        },
      };
    },
    run<T>(name: string, kind: Kind, parent: TraceCarrier | undefined, attributes: SpanAttributes | undefined, fn: () => T): T {
      const parentCtx = parentContext(parent);
      const span = tracer.startSpan(name, { kind: kinds[kind], ...(attributes ? { attributes } : {}) }, parentCtx);
      let result: T;
      try {
        result = context.with(trace.setSpan(parentCtx, span), fn);
      } catch (err) {
        fail(span, err);
        span.end();
        throw err;
      }
      if (result instanceof Promise) {
        return result.then(
          (value) => {
            span.end();
            return value;
          },
          (err: unknown) => {
            fail(span, err);
            span.end();
            throw err;
          },
        ) as T;
      }
      span.end();
      return result;
    },
    detached: (fn) => context.with(ROOT_CONTEXT, fn),
    nameRequest(method, route) {
      const span = trace.getSpan(context.active());
      if (!span) return;
      span.updateName(`${method} ${route}`);
      span.setAttribute('http.route', route);
      overwrite(span, PATH_ATTRIBUTES, route);
      overwrite(span, FULL_URL_ATTRIBUTES, route);
      overwrite(span, QUERY_ATTRIBUTES, '');
    },
    shutdown: () => sdk.shutdown(),
  };
}
