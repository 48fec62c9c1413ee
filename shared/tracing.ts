// Traces (contract §16; docs/operations.md, "Traces"). This module loads
// nothing of OpenTelemetry: `startTracing` imports the SDK (tracing-sdk.ts)
// only when OTEL_EXPORTER_OTLP_ENDPOINT (or its traces-only variant) is set,
// before the stack is imported, so its instrumentations see koa, pg, ioredis
// and http load. Everywhere else the code asks `tracing`, null when off: one
// null check, no allocation, on the paths it touches.
//
// The trace context of a change travels with its events and jobs as a
// carrier string (the W3C `traceparent`, then `tracestate` after a newline if
// any): a column of the outbox, messages and job_outbox rows (migration 160),
// the field `t` of a Redis stream entry (relay/event-stream.ts), a delivery
// job's `trace`, and a BullMQ job's `opts.telemetry.metadata` (jobs.ts).

/** A trace context carried with an event or a job (W3C traceparent[\ntracestate]). */
export type TraceCarrier = string;

export type SpanKind = 'internal' | 'producer' | 'consumer' | 'client' | 'server';

export type SpanAttributes = Record<string, string | number | boolean>;

export interface TraceSpan {
  /** The span's own context, to carry to what it causes. */
  readonly carrier: TraceCarrier;
  end(error?: unknown): void;
}

export interface Tracing {
  /** The context of the active span, to carry with what the current work records; undefined when none is sampled. */
  active(): TraceCarrier | undefined;
  /** Starts a span, child of `parent` (a carried context), or of the active span when no parent is given. */
  start(name: string, kind: SpanKind, parent: TraceCarrier | undefined, attributes?: SpanAttributes): TraceSpan;
  /** Runs `fn` in a span child of `parent` (its database and Redis calls become the span's children); the span ends when `fn` settles. */
  run<T>(name: string, kind: SpanKind, parent: TraceCarrier | undefined, attributes: SpanAttributes | undefined, fn: () => T): T;
  /** Runs `fn` outside any trace: background work woken by a request (the relay, the job publisher) is not part of it. */
  detached<T>(fn: () => T): T;
  /** Names the HTTP request's span by its route template and puts the template in place of the path (which may hold a hook's secret id). */
  nameRequest(method: string, route: string): void;
  /** Sends the spans still buffered. */
  shutdown(): Promise<void>;
}

/** The process's tracing, or null when it is off (no OTLP endpoint). */
export let tracing: Tracing | null = null;

/** Whether the environment asks for traces. */
export const tracingWanted = (env: NodeJS.ProcessEnv = process.env) => Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);

/**
 * Starts the OpenTelemetry SDK when the environment asks for it; call before
 * the stack is imported. `serviceName`: the default `service.name`
 * (OTEL_SERVICE_NAME wins).
 */
export async function startTracing(serviceName: string, env: NodeJS.ProcessEnv = process.env): Promise<Tracing | null> {
  if (tracing || !tracingWanted(env)) return tracing;
  const { startSdk } = await import('./tracing-sdk.js');
  tracing = await startSdk(serviceName);
  return tracing;
}
