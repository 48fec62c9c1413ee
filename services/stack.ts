// The composition root: one code base, the roles in ROLES, one HTTP port.
// `npm start` and the tests start the stack through here. Roles are imported
// only when this process runs them: a gateway-only pod never loads sharp or
// the BullMQ worker (services/core/jobs.ts), nor the API's routes.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '../shared/config.js';
import { existsAt } from '../shared/feature-level.js';
import { createDb, ensureDatabase } from '../shared/db/knex.js';
import { migrateLatest } from '../shared/db/migrate.js';
import { ReadRouting } from '../shared/db/read-replicas.js';
import { resolveDependencies, type Dependencies, type Probes } from '../shared/embedded.js';
import { createLogger, type Logger } from '../shared/logger.js';
import { createMetrics } from '../shared/metrics.js';
import { createOutboxRelay, type OutboxRelay } from '../shared/relay/outbox-relay.js';
import { EVENT_SUBSCRIPTIONS } from './core/event-subscriptions/event-subscriptions.schemas.js';
import { REMOTE_MCP } from './core/oauth/oauth.level.js';
import { SYSTEM_AGENT } from './core/workspaces/system-agent.js';
import { messageCreatedEvents } from './core/messages/messages.store.js';
import { presentersAt } from './core/presenters.js';
import { PageCache } from './core/messages/page-cache.js';
import type { JobOutboxPublisher } from '../shared/job-outbox.js';
import { JobWakeups } from '../shared/job-wakeups.js';
import { ACCESS_STREAM_BLOCK_MS, AccessCache } from '../shared/access-cache.js';
import { OutboundFetcher } from '../shared/http/outbound-fetch.js';
import { CommitListeners } from '../shared/events.js';
import { busKeys } from '../shared/event-bus.js';
import { streamFeatures as streamFeaturesOf } from './gateway/stream-level.js';
import { StreamReader } from '../shared/stream-reader.js';
import { answering, createRedis, keys } from '../shared/redis.js';
import type { Runtime } from '../shared/runtime.js';
import { createApp } from './app.js';
import { createS3Client, ensureBucket } from './stores.js';

export interface Stack {
  rt: Runtime;
  url: string;
  server: http.Server;
  relay: OutboxRelay | null;
  /** Moves recorded jobs to the queue (processes that write: api, worker). */
  jobs: JobOutboxPublisher | null;
  /** Graceful stop: refuse new work, finish what is in flight, close connections. */
  close(): Promise<void>;
}

const SHUTDOWN_BUDGET_MS = 9_000;
/** /readyz answers within a second even when a dependency hangs. */
const READY_TIMEOUT_MS = 800;
/** Connections waiting to be accepted: as many as the kernel allows (it caps this at net.core.somaxconn). */
const LISTEN_BACKLOG = 65_535;

export async function startStack(config: Config, log: Logger = createLogger(config.logLevel), probes: Probes = {}): Promise<Stack> {
  const roles = new Set(config.roles);
  const writes = roles.has('api') || roles.has('worker');
  // Processes that read events (api, gateway) keep caches fresh from them.
  const readsEvents = roles.has('api') || roles.has('gateway');

  const deps = await resolveDependencies(config, log, probes);
  const rt = await connect(config, log, deps, readsEvents);
  if (config.migrateOnStart) await migrate(rt, deps);
  // Only the roles that touch files need the bucket (the gateway never does).
  if (writes) await ensureBucket(rt.s3, config.s3.bucket);

  const events = await startEventFlow(rt, deps, { writes, readsEvents });
  // Replicas are watched where reads are served (api, gateway).
  if (readsEvents) rt.reads.start();
  await events.reader?.ready();

  const gateway = roles.has('gateway') ? (await import('./gateway/gateway.js')).createGateway(rt, { databaseUrl: deps.databaseUrl, redisUrl: deps.redisUrl }) : null;
  await gateway?.ready();
  const worker = roles.has('worker') ? await (await import('./worker/worker.js')).startWorker(rt, { redisUrl: deps.redisUrl }) : null;
  // Level-3 machinery: the repeating jobs of the level (the streaming sweep).
  if (worker) {
    const { REPEATING_JOBS, scheduleRepeating } = await import('../shared/jobs.js');
    for (const job of REPEATING_JOBS.filter((j) => existsAt(j, config.featureLevel) && (j.when?.(config) ?? true))) await scheduleRepeating(rt, job);
  }
  // Level 3: the worker delivers events to subscriptions (docs/bots.md).
  const eventDeliveries =
    roles.has('worker') && existsAt(EVENT_SUBSCRIPTIONS, config.featureLevel)
      ? await (await import('./worker/event-deliveries.js')).startEventDeliveries(rt, { redisUrl: deps.redisUrl })
      : null;
  const api = roles.has('api') ? (await import('./api/routes.js')).apiRoutes(config.featureLevel).router : undefined;
  // Level 3: the remote MCP endpoint and its OAuth (contract §15; docs/mcp.md).
  const mcp = api && existsAt(REMOTE_MCP, config.featureLevel) ? (await import('./remote-mcp.js')).remoteMcpEndpoint(rt, api) : undefined;
  // The web app (services/web/dist) is served by the API role.
  const web = roles.has('api') ? (await import('./api/web-app.js')).webApp() : undefined;

  const hookTakesPosts = roles.has('api') ? (await import('./core/webhooks/webhooks.service.js')).hookTakesPosts : undefined;
  const app = createApp(rt, { gateway: gateway ?? undefined, api, web, hookTakesPosts, mcp: mcp?.middleware });
  const server = http.createServer(app.callback());
  server.keepAliveTimeout = 65_000; // longer than common load balancer idle timeouts
  // The kernel's own ceiling (net.core.somaxconn caps it) rather than node's
  // 511: a storm of connections (every stream of a restarted gateway coming
  // back, a loadtest's ramp) overflowed 511 while the loop was busy, and each
  // dropped SYN cost its client 1, 3 or 7 s (docs/bench.md, "Connections lost
  // to a full listen queue").
  await new Promise<void>((resolve) => server.listen({ port: config.port, host: config.host, backlog: LISTEN_BACKLOG }, resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  log.info({ roles: config.roles, port }, 'axid is listening');

  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= (async () => {
      // Stop taking work first (streams, jobs, requests), then the plumbing under it.
      const hardStop = setTimeout(() => server.closeAllConnections(), SHUTDOWN_BUDGET_MS);
      const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await gateway?.close();
      await mcp?.close();
      await eventDeliveries?.close();
      await worker?.close();
      await serverClosed;
      clearTimeout(hardStop);
      await events.stop();
      if (writes) await (await import('../shared/jobs.js')).closeQueue(rt);
      if (config.email) await (await import('./core/email/email.mailer.js')).closeMailer(rt);
      await rt.reads.stop();
      rt.pages.stop();
      await rt.redis.quit().catch(() => rt.redis.disconnect());
      await rt.db.destroy();
      await deps.stop();
    })());

  return { rt, url, server, relay: events.relay, jobs: events.jobs, close };
}

/** The connections and instruments every role is handed. */
async function connect(config: Config, log: Logger, deps: Dependencies, readsEvents: boolean): Promise<Runtime> {
  // The embedded PGlite (one connection, for trying Axid out) is left unbounded.
  const bounds = deps.embeddedDatabase ? undefined : { statementTimeoutMs: config.dbStatementTimeoutMs };
  const db = createDb(deps.databaseUrl, deps.embeddedDatabase ? 1 : 10, log, bounds);
  // Without auto-pipelining: a request sends one or two commands (its rate
  // limit, a kept page), and ioredis made a pipeline for each, copying every
  // defined script onto it; reads cost 12 to 25 % less API CPU without, and
  // posting showed no difference (docs/bench.md, "Auto-pipelining off").
  const redis = createRedis(deps.redisUrl, 'axid-commands', { autoPipelining: false, commandTimeoutMs: config.redisCommandTimeoutMs });
  const metrics = createMetrics();
  redis.on('error', (err) => {
    metrics.dependencyErrors.inc({ dependency: 'redis' });
    log.debug({ err: err.message }, 'redis connection error');
  });
  const s3 = createS3Client(config, deps.s3Endpoint);
  const reads = new ReadRouting({
    primary: db,
    replicaUrls: deps.embeddedDatabase ? [] : config.databaseReadUrls,
    maxLagMs: config.readMaxLagMs,
    redis,
    prefix: config.redisKeyPrefix,
    metrics,
    log,
    bounds,
  });
  return {
    config,
    log,
    db,
    reads,
    redis,
    s3,
    bus: busKeys(config.redisKeyPrefix, config.eventShards),
    metrics,
    // Only where an event reader keeps it fresh (a stream still checks its
    // key in the database once it is registered).
    access: new AccessCache(readsEvents),
    events: new CommitListeners(),
    jobs: new JobWakeups(),
    outbound: new OutboundFetcher(config.outbound),
    // The objects of the level, made once: core renders through them and never asks the level.
    presenters: presentersAt(config.featureLevel),
    pages: new PageCache(redis, { prefix: config.redisKeyPrefix, ttlSeconds: config.pageCacheSeconds, level: config.featureLevel, log, metrics }),
    // Time-boxed: a dependency that does not answer makes /readyz answer 503
    // within READY_TIMEOUT_MS instead of hanging with it.
    async ready() {
      if (!answering(redis)) return false; // commands would wait in ioredis's offline queue, or out their bound
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), READY_TIMEOUT_MS)));
      const checks = Promise.all([db.raw('SELECT 1'), redis.ping()]).then(
        () => true,
        () => false,
      );
      try {
        return await Promise.race([checks, late]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/**
 * MIGRATE_ON_START (on for `npm start`): create the database, migrate, and on
 * an empty database bootstrap the first workspace. In Kubernetes the migration
 * Job does this (`npm run migrate`) and the deployments only start.
 */
async function migrate(rt: Runtime, deps: Dependencies) {
  const { bootstrapWorkspace } = await import('./core/bootstrap.js');
  // The first workspace has its system agent where the level has one.
  const first = { adminKey: rt.config.bootstrapAdminKey, systemAgent: existsAt(SYSTEM_AGENT, rt.config.featureLevel) };
  await ensureDatabase(deps.databaseUrl);
  // Migrations and their lock wait may rightly outlast the runtime pool's bounds: a pool of their own, unbounded.
  const db = deps.embeddedDatabase ? rt.db : createDb(deps.databaseUrl, 2, rt.log);
  try {
    await migrateLatest(db, { lock: !deps.embeddedDatabase, then: (trx) => bootstrapWorkspace(trx, first, rt.log) });
  } finally {
    if (db !== rt.db) await db.destroy();
  }
}

/**
 * Who publishes and who reads events. Every process that writes (api, worker)
 * can relay the outbox; one is elected. Every reading process (api, gateway)
 * reads the access stream to keep its access cache fresh; the gateway reads
 * the bus's shards itself (services/gateway/bus.ts).
 */
async function startEventFlow(rt: Runtime, deps: Dependencies, o: { writes: boolean; readsEvents: boolean }) {
  const streams = keys(rt.config.redisKeyPrefix);
  const relay = o.writes
    ? createOutboxRelay({
        db: rt.db,
        databaseUrl: deps.databaseUrl,
        redis: rt.redis,
        redisUrl: deps.redisUrl,
        bus: rt.bus,
        accessStreamKey: streams.accessEvents,
        // Level 3 keeps the events for replay (docs/realtime.md); level 2 only by length.
        retentionMs: streamFeaturesOf(rt.config.featureLevel).replay ? rt.config.streamRetentionSeconds * 1000 : null,
        wakeChannel: streams.outboxWake,
        sole: deps.embeddedDatabase,
        eventSources: [messageCreatedEvents(rt.config.featureLevel)],
        log: rt.log,
        metrics: rt.metrics,
      })
    : null;
  void relay?.start();
  // Imported only where jobs are written: it loads BullMQ.
  const jobs = o.writes ? new (await import('../shared/job-outbox.js')).JobOutboxPublisher(rt) : null;
  jobs?.start();

  // It answers at least every ACCESS_STREAM_BLOCK_MS, so the access cache knows it is still being told (shared/access-cache.ts).
  const reader = o.readsEvents ? new StreamReader({ redisUrl: deps.redisUrl, streamKeys: [streams.accessEvents], log: rt.log, blockMs: ACCESS_STREAM_BLOCK_MS }) : null;
  reader?.subscribe((event) => rt.access.onEvent(event));
  reader?.onHeard(() => rt.access.heard());
  const stopCommitListener = rt.events.subscribe((committed) => {
    if (relay) relay.committed();
    for (const event of committed) rt.access.onEvent(event);
    // Every change to what a history page shows carries an event to its channel: the kept pages go before the writer is answered.
    return rt.pages.invalidate(committed.flatMap((event) => (event.to.scope === 'channel' ? [event.to.channel_id] : [])));
  });
  reader?.start();

  return {
    relay,
    jobs,
    reader,
    async stop() {
      await relay?.stop();
      await jobs?.stop();
      stopCommitListener();
      await reader?.stop();
    },
  };
}
