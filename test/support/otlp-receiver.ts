// A stand-in OpenTelemetry collector for tests: takes OTLP/JSON trace exports
// (POST /v1/traces, as OTEL_EXPORTER_OTLP_PROTOCOL=http/json sends them) and
// keeps their spans.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number; arrayValue?: { values: AnyValue[] } };

export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
}

interface ExportRequest {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: AnyValue }[] };
    scopeSpans?: { spans?: { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes?: { key: string; value: AnyValue }[] }[] }[];
  }[];
}

const valueOf = (v: AnyValue): unknown =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.boolValue ?? v.doubleValue ?? v.arrayValue?.values.map(valueOf);

const attributesOf = (list: { key: string; value: AnyValue }[] = []) => Object.fromEntries(list.map((a) => [a.key, valueOf(a.value)]));

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  /** Every request body received, as text (to look for what must never be sent). */
  bodies: string[];
  /** Resolves once `found` holds for the spans received (checked on each export), or rejects after `ms`. */
  waitFor(found: (spans: ReceivedSpan[]) => boolean, ms?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const waiters = new Set<() => void>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (body += d));
    req.on('end', () => {
      bodies.push(body);
      if (req.url === '/v1/traces' && req.headers['content-type']?.startsWith('application/json')) {
        const parsed = JSON.parse(body) as ExportRequest;
        for (const rs of parsed.resourceSpans ?? []) {
          const service = String(attributesOf(rs.resource?.attributes)['service.name'] ?? '');
          for (const ss of rs.scopeSpans ?? []) {
            for (const s of ss.spans ?? []) {
              spans.push({ service, traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId ?? '', name: s.name, kind: s.kind, attributes: attributesOf(s.attributes) });
            }
          }
        }
        for (const wake of waiters) wake();
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    spans,
    bodies,
    waitFor(found, ms = 45_000) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!found(spans)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`the spans expected did not arrive in ${ms} ms; received: ${spans.map((s) => `${s.service} ${s.name}`).join(', ')}`));
        }, ms);
        waiters.add(check);
        check();
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
