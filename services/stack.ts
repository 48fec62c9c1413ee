// The composition root: one code base, the roles in ROLES, one HTTP port.
// `npm start` and the tests start the stack through here.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { S3Client, CreateBucketCommand, HeadBucketCommand } from '@aws-sdk/client-s3';
import type { Config } from '../shared/config.js';
import { createDb, ensureDatabase } from '../shared/db/knex.js';
import { migrateLatest } from '../shared/db/migrate.js';
import { resolveDependencies, type Probes } from '../shared/embedded.js';
import { AppError } from '../shared/errors.js';
import type { AppState } from '../shared/http/context.js';
import { corsMiddleware } from '../shared/http/cors.js';
import { renderErrors } from '../shared/http/errors.js';
import { opsRoutes } from '../shared/http/ops.js';
import { rateLimit } from '../shared/http/rate-limit.js';
import { requestContext } from '../shared/http/request-context.js';
import { closeQueue } from '../shared/jobs.js';
import { createLogger, type Logger } from '../shared/logger.js';
import { createMetrics } from '../shared/metrics.js';
import { OutboxRelay } from '../shared/outbox-relay.js';
import { AccessCache } from '../shared/access-cache.js';
import { onCommittedEvents } from '../shared/events.js';
import { StreamReader } from '../shared/stream-reader.js';
import { createRedis, keys } from '../shared/redis.js';
import type { Runtime } from '../shared/runtime.js';
import { apiRoutes } from './api/routes.js';
import { bootstrapWorkspace } from './api/bootstrap.js';
import { createGateway } from './gateway/gateway.js';
import { startWorker } from './worker/worker.js';

export interface Stack {
  rt: Runtime;
  url: string;
  server: http.Server;
  relay: OutboxRelay | null;
  /** Graceful stop: refuse new work, finish what is in flight, close connections. */
  close(): Promise<void>;
}

const SHUTDOWN_BUDGET_MS = 9_000;

export async function startStack(config: Config, log: Logger = createLogger(config.logLevel), probes: Probes = {}): Promise<Stack> {
  const deps = await resolveDependencies(config, log, probes);
  await ensureDatabase(deps.databaseUrl);
  const db = createDb(deps.databaseUrl, deps.embeddedDatabase ? 1 : 10);
  const redis = createRedis(deps.redisUrl, 'axid-commands', { autoPipelining: true });
  redis.on('error', (err) => log.debug({ err: err.message }, 'redis connection error'));
  const s3 = new S3Client({
    endpoint: deps.s3Endpoint,
    region: config.s3.region,
    forcePathStyle: config.s3.forcePathStyle,
    credentials: { accessKeyId: config.s3.accessKeyId, secretAccessKey: config.s3.secretAccessKey },
  });

  // Processes that read events (api, gateway) keep caches fresh from them.
  const readsEvents = config.roles.includes('api') || config.roles.includes('gateway');
  const rt: Runtime = {
    config,
    log,
    db,
    redis,
    s3,
    streamKey: keys(config.redisKeyPrefix).events,
    metrics: createMetrics(),
    // Only where an event reader keeps it fresh (a stream still checks its
    // key in the database once it is registered).
    access: new AccessCache(readsEvents),
    async ready() {
      try {
        await Promise.all([db.raw('SELECT 1'), redis.ping()]);
        return true;
      } catch {
        return false;
      }
    },
  };

  await migrateLatest(db, { lock: !deps.embeddedDatabase, then: (trx) => bootstrapWorkspace(trx, config, log) });
  const roles = new Set(config.roles);
  // Only the roles that touch files need the bucket (the gateway never does).
  if (roles.has('api') || roles.has('worker')) await ensureBucket(s3, config.s3.bucket);
  // Every process that writes (api, worker) can relay the outbox; one is elected.
  const relay =
    roles.has('api') || roles.has('worker')
      ? new OutboxRelay({
          db,
          databaseUrl: deps.databaseUrl,
          redis,
          streamKey: rt.streamKey,
          accessStreamKey: keys(config.redisKeyPrefix).accessEvents,
          log,
          metrics: rt.metrics,
          redisUrl: deps.redisUrl,
          wakeChannel: keys(config.redisKeyPrefix).outboxWake,
          listen: !deps.embeddedDatabase,
        })
      : null;
  relay?.start();

  // One event reader per process, shared by the gateway (fan-out) and the API
  // (cache invalidation). Without the gateway, the API reads only the access stream.
  const readerStream = roles.has('gateway') ? rt.streamKey : keys(config.redisKeyPrefix).accessEvents;
  const reader = readsEvents ? new StreamReader({ redisUrl: deps.redisUrl, streamKey: readerStream, log, blockMs: 5_000 }) : null;
  reader?.subscribe((event) => rt.access.onEvent(event));
  const stopCommitListener = onCommittedEvents((committed) => {
    relay?.publishCommitted(committed);
    for (const c of committed) rt.access.onEvent(c.event);
  });
  reader?.start();
  await reader?.ready();
  const gateway = roles.has('gateway') ? createGateway(rt, { databaseUrl: deps.databaseUrl, redisUrl: deps.redisUrl, reader: reader! }) : null;
  const worker = roles.has('worker') ? await startWorker(rt, { redisUrl: deps.redisUrl }) : null;

  const app = new Koa<AppState>({ proxy: true });
  app.use(requestContext(rt));
  // Outside renderErrors, so error answers keep the CORS headers, and before
  // the rate limit, so preflights (answered here) are not counted.
  if (config.corsOrigins.length > 0) app.use(corsMiddleware(config.corsOrigins));
  app.use(renderErrors);
  app.use(opsRoutes);
  const limiter = rateLimit(rt);
  app.use(limiter);
  if (gateway) app.use(gateway.middleware);
  if (roles.has('api')) {
    app.use(apiRoutes().router.routes());
  }
  app.use(async () => {
    throw new AppError('not_found', 'no such route: see /api/v1/openapi.json');
  });
  app.on('error', (err) => log.debug({ err: err.message }, 'koa error'));

  const server = http.createServer(app.callback());
  server.keepAliveTimeout = 65_000; // longer than common load balancer idle timeouts
  await new Promise<void>((resolve) => server.listen(config.port, config.host, resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  log.info({ roles: config.roles, port }, 'axid is listening');

  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= (async () => {
      const hardStop = setTimeout(() => server.closeAllConnections(), SHUTDOWN_BUDGET_MS);
      const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await gateway?.close();
      await worker?.close();
      await serverClosed;
      clearTimeout(hardStop);
      limiter.stop();
      await relay?.stop();
      stopCommitListener();
      await reader?.stop();
      await closeQueue(rt);
      await redis.quit().catch(() => redis.disconnect());
      await db.destroy();
      await deps.stop();
    })());

  return { rt, url, server, relay, close };
}

async function ensureBucket(s3: S3Client, bucket: string) {
  try {
    await s3.send(new HeadBucketCommand({ Bucket: bucket }));
  } catch {
    await s3.send(new CreateBucketCommand({ Bucket: bucket })).catch((err: { name?: string }) => {
      if (err.name !== 'BucketAlreadyOwnedByYou' && err.name !== 'BucketAlreadyExists') throw err;
    });
  }
}
