import client from 'prom-client';
import type { Metrics } from '../../shared/metrics.js';

/**
 * The gateway's instruments, registered in the stack's registry. Looked up
 * before being created so that a second gateway on the same runtime (tests)
 * shares them instead of failing on a duplicate name.
 */
export function gatewayMetrics(m: Metrics) {
  const { registry } = m;
  const counter = (name: string, help: string) =>
    (registry.getSingleMetric(name) as client.Counter | undefined) ?? new client.Counter({ name, help, registers: [registry] });
  const gauge = (name: string, help: string) =>
    (registry.getSingleMetric(name) as client.Gauge | undefined) ?? new client.Gauge({ name, help, registers: [registry] });
  return {
    connections: gauge('axid_sse_connections', 'Open SSE streams on this process'),
    received: counter('axid_events_received_total', 'Events read from the Redis stream'),
    delivered: counter('axid_events_delivered_total', 'Event frames written to SSE streams'),
    dropped: counter('axid_events_dropped_total', 'Event frames not delivered because their stream was cut off as too slow'),
    slowDisconnects: counter('axid_sse_slow_disconnects_total', 'SSE streams ended because the client fell too far behind'),
    lag: gauge('axid_stream_lag_ms', 'Now minus the time of the last stream entry read (ms)'),
    shardReaders: gauge('axid_event_shard_readers', 'Shards of the event bus this process reads now'),
  };
}

export type GatewayMetrics = ReturnType<typeof gatewayMetrics>;
