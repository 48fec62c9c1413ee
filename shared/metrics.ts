import client from 'prom-client';

/** One registry per running stack (tests run several in one process). */
export function createMetrics() {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  const m = {
    registry,
    httpRequests: new client.Counter({
      name: 'axid_http_requests_total',
      help: 'HTTP requests by route and status',
      labelNames: ['method', 'route', 'status'] as const,
      registers: [registry],
    }),
    httpDuration: new client.Histogram({
      name: 'axid_http_request_duration_seconds',
      help: 'HTTP request latency by route',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
      registers: [registry],
    }),
    rateLimited: new client.Counter({
      name: 'axid_rate_limit_rejections_total',
      help: 'Requests refused with 429',
      registers: [registry],
    }),
    signIns: new client.Counter({
      name: 'axid_sign_in_attempts_total',
      help: 'Sign-in attempts (password, single sign-on, one-time codes, invites) by outcome',
      labelNames: ['method', 'outcome'] as const,
      registers: [registry],
    }),
    passwordChecks: new client.Histogram({
      name: 'axid_password_check_seconds',
      help: 'Time of one scrypt password hash: a check, the dummy check of an unknown email, or a new password (tune PASSWORD_SCRYPT_N with it)',
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    eventsPublished: new client.Counter({
      name: 'axid_events_published_total',
      help: 'Events written to the Redis stream',
      registers: [registry],
    }),
    // Outbox lag is time() minus the newest of these across processes: it
    // grows while nothing publishes (Redis away, no relay elected), whatever
    // the traffic (docs/operations.md, "Dashboards and alerts").
    outboxCaughtUp: new client.Gauge({
      name: 'axid_outbox_caught_up_timestamp_seconds',
      help: 'When this process, as the elected relay, last had published every committed event (Unix seconds; 0 if never)',
      registers: [registry],
    }),
    relayLeader: new client.Gauge({
      name: 'axid_relay_leader',
      help: '1 while this process is the elected outbox relay of its database',
      registers: [registry],
    }),
    dependencyErrors: new client.Counter({
      name: 'axid_dependency_errors_total',
      help: 'Failures of a dependency: requests answered 503 because Postgres was unreachable or hung (postgres), errors of the Redis command connection (redis)',
      labelNames: ['dependency'] as const,
      registers: [registry],
    }),
    dbReads: new client.Counter({
      name: 'axid_db_reads_total',
      help: 'Reads that could go to a read replica, by where they went (primary or replica) and why',
      labelNames: ['target', 'reason'] as const,
      registers: [registry],
    }),
    pageCache: new client.Counter({
      name: 'axid_page_cache_reads_total',
      help: 'Newest history pages asked of the page cache (services/core/messages/page-cache.ts): hit, miss, or error (read from the database)',
      labelNames: ['result'] as const,
      registers: [registry],
    }),
    replicaLag: new client.Gauge({
      name: 'axid_db_replica_lag_seconds',
      help: 'How long ago the primary first wrote WAL the read replica has not replayed',
      labelNames: ['replica'] as const,
      registers: [registry],
    }),
    replicaUp: new client.Gauge({
      name: 'axid_db_replica_up',
      help: '1 when the read replica answers, 0 when its reads go to the primary',
      labelNames: ['replica'] as const,
      registers: [registry],
    }),
    jobDuration: new client.Histogram({
      name: 'axid_job_duration_seconds',
      help: 'Worker job run time by job name and outcome',
      labelNames: ['job', 'outcome'] as const,
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 15, 60],
      registers: [registry],
    }),
  };
  return m;
}

export type Metrics = ReturnType<typeof createMetrics>;
