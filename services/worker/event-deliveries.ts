// The event subscription deliverer (level 3, started by services/stack.ts in
// worker processes; docs/bots.md). Two halves:
// - the worker processes read the event stream as one consumer group
//   (shared/stream-group-reader.ts): each entry is taken by one of them, and
//   a dead one's pending entries are claimed by another; each entry becomes
//   one job per subscription (core deliveriesFor), enqueued with a job id of
//   its own so a claimed-again entry enqueues nothing twice;
// - a BullMQ queue of its own runs the attempts (core `deliver`): its own
//   concurrency, so a slow endpoint never holds up file jobs, and slots
//   counted in Redis per subscription and per owner, so one slow endpoint
//   holds at most EVENT_DELIVERY_PER_SUBSCRIPTION attempts, and one owner's
//   subscriptions at most EVENT_DELIVERY_PER_OWNER, across every worker: a
//   slow owner never takes every slot of EVENT_DELIVERY_CONCURRENCY. A job
//   that finds no slot waits in BullMQ's delayed set without counting an
//   attempt.
import { DelayedError, Queue, Worker, type Job } from 'bullmq';
import client from 'prom-client';
import { queuePrefix } from '../../shared/jobs.js';
import { createRedis } from '../../shared/redis.js';
import type { Runtime } from '../../shared/runtime.js';
import { StreamGroupReader } from '../../shared/stream-group-reader.js';
import { deliver, deliveriesFor, deliveryJobId, retryDelay, type DeliveryJob } from '../core/event-subscriptions/event-subscriptions.delivery.js';
import { closeWorker, jobsInFlight } from './close.js';
import { tracing } from '../../shared/tracing.js';

export const DELIVERY_QUEUE = 'event-deliveries';
export const DELIVERY_GROUP = 'event-deliveries';

/**
 * The streams the deliverer reads, one consumer-group reader each: every
 * shard of the event bus (shared/event-bus.ts), its durable events and its
 * live ones (typing, presence). A membership change is on two shards under
 * one outbox id: the same event id, so the same job id, enqueued once.
 */
export const deliveryStreams = (rt: Runtime): { key: string; label: string }[] =>
  rt.bus.shards.flatMap((shard) => [
    { key: shard.events, label: `b${shard.index}` },
    { key: shard.live, label: `l${shard.index}` },
  ]);

// A slot is a member of a sorted set scored by when it lapses, so the slot of
// a worker killed mid-attempt frees itself. One key per subscription and one
// per owner, both tagged with the owner (one hash slot on a cluster), taken
// together or not at all: KEYS = the subscription's and the owner's set, ARGV =
// now, lapse, per subscription, member, ttl, per owner.
const TAKE_SLOT = `
for i = 1, #KEYS do redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', ARGV[1]) end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
if KEYS[2] and redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[6]) then return 0 end
for i = 1, #KEYS do
  redis.call('ZADD', KEYS[i], ARGV[2], ARGV[4])
  redis.call('PEXPIRE', KEYS[i], ARGV[5])
end
return 1`;

export interface EventDeliveryOptions {
  redisUrl: string;
}

export async function startEventDeliveries(rt: Runtime, o: EventDeliveryOptions) {
  const cfg = rt.config.eventDelivery;
  const prefix = queuePrefix(rt.config);
  // Jobs queued before owners were recorded have the subscription's set alone.
  const slotKeys = (job: DeliveryJob) =>
    job.ownerId
      ? [`{${rt.config.redisKeyPrefix}delivery-owner:${job.ownerId}}:sub:${job.subscriptionId}`, `{${rt.config.redisKeyPrefix}delivery-owner:${job.ownerId}}:all`]
      : [`${rt.config.redisKeyPrefix}event-delivery-slots:${job.subscriptionId}`];
  // An attempt lasts at most timeoutMs; its slot lapses a while after, should its worker die.
  const slotTtlMs = cfg.timeoutMs * 2 + 5_000;

  const deliveries = new client.Counter({
    name: 'axid_event_deliveries_total',
    help: 'Event subscription delivery attempts by outcome (delivered, retry, refused, gave_up, disabled, skipped)',
    labelNames: ['outcome'] as const,
    registers: [rt.metrics.registry],
  });
  const latency = new client.Histogram({
    name: 'axid_event_delivery_attempt_seconds',
    help: 'Time of one delivery POST, to the answer or the timeout',
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [rt.metrics.registry],
  });

  const lag = new client.Histogram({
    name: 'axid_event_delivery_lag_seconds',
    help: 'From an event to its delivery to a subscription (2xx), retries included',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15, 60, 300],
    registers: [rt.metrics.registry],
  });

  const queue = new Queue<DeliveryJob>(DELIVERY_QUEUE, {
    connection: rt.redis,
    prefix,
    defaultJobOptions: {
      // Retries end with the retry window (core deliver), not with a count.
      attempts: 100_000,
      backoff: { type: 'delivery' },
      removeOnComplete: { age: 3600, count: 10_000 },
      removeOnFail: { age: 24 * 3600, count: 10_000 },
    },
  });
  queue.on('error', (err) => rt.log.warn({ err: err.message }, 'event delivery queue error'));

  // Queue depth is read when /metrics is scraped.
  new client.Gauge({
    name: 'axid_event_delivery_queue_depth',
    help: 'Event deliveries waiting, delayed (retries) or running',
    labelNames: ['state'] as const,
    registers: [rt.metrics.registry],
    async collect() {
      const counts = await queue.getJobCounts('waiting', 'delayed', 'active');
      for (const [state, n] of Object.entries(counts)) this.set({ state }, n);
    },
  });

  const connection = createRedis(o.redisUrl, 'axid-event-delivery-worker');
  connection.on('error', (err) => rt.log.debug({ err: err.message }, 'event delivery worker: redis connection error'));

  const running = jobsInFlight();
  const deliverJob = async (job: Job<DeliveryJob>, token?: string) => {
    const keys = slotKeys(job.data);
    const now = Date.now();
    const held = `${job.id}:${now}`;
    const took = await rt.redis.eval(TAKE_SLOT, keys.length, ...keys, now, now + slotTtlMs, cfg.perSubscription, held, slotTtlMs, cfg.perOwner);
    if (took !== 1) {
      // Busy subscription: wait without holding a worker slot or counting an attempt.
      await job.moveToDelayed(Date.now() + 100 + Math.floor(Math.random() * 200), token);
      throw new DelayedError();
    }
    let result;
    try {
      const attempt = job.attemptsMade + 1;
      // Its POST (instrumented http) is the span's child and carries the trace to the receiver.
      result =
        tracing && job.data.trace
          ? await tracing.run(`event delivery ${job.data.event.type}`, 'consumer', job.data.trace, { 'axid.event.type': job.data.event.type, 'axid.delivery.attempt': attempt }, () => deliver(rt, job.data, attempt))
          : await deliver(rt, job.data, attempt);
    } finally {
      await Promise.all(keys.map((key) => rt.redis.zrem(key, held)));
    }
    deliveries.inc({ outcome: result.outcome });
    if (result.durationMs !== undefined) latency.observe(result.durationMs / 1000);
    if (result.outcome === 'delivered') lag.observe(Math.max(0, Date.now() - Date.parse(job.data.event.created_at)) / 1000);
    if (result.outcome === 'retry') throw new Error('delivery failed: retried later');
  };
  const worker = new Worker<DeliveryJob>(
    DELIVERY_QUEUE,
    (job: Job<DeliveryJob>, token?: string) => running.track(deliverJob(job, token)),
    {
      connection,
      prefix,
      concurrency: cfg.concurrency,
      // A worker killed mid-attempt: the job runs again once its lock lapses (the same event id; receivers deduplicate).
      lockDuration: Math.max(10_000, cfg.timeoutMs + 5_000),
      stalledInterval: 5_000,
      maxStalledCount: 5,
      settings: { backoffStrategy: (attemptsMade: number) => retryDelay(cfg, attemptsMade) },
    },
  );
  worker.on('error', (err) => rt.log.warn({ err: err.message }, 'event delivery worker error'));
  await worker.waitUntilReady();

  const readers = deliveryStreams(rt).map(
    ({ key, label }) =>
      new StreamGroupReader({
        redisUrl: o.redisUrl,
        streamKey: key,
        label,
        group: DELIVERY_GROUP,
        log: rt.log,
        claimIdleMs: cfg.claimIdleMs,
        async handle(entries) {
          const jobs = await deliveriesFor(rt, entries);
          if (jobs.length > 0) await queue.addBulk(jobs.map((data) => ({ name: 'deliver', data, opts: { jobId: deliveryJobId(data) } })));
        },
      }),
  );
  // The groups exist before this returns: events committed from now on are the deliverer's.
  await Promise.all(readers.map((r) => r.ensureGroup()));
  for (const reader of readers) reader.start();

  return {
    async close() {
      await Promise.all(readers.map((r) => r.stop()));
      rt.metrics.registry.removeSingleMetric('axid_event_delivery_queue_depth');
      await closeWorker(worker, running, rt.log);
      await queue.close();
      await connection.quit().catch(() => connection.disconnect());
    },
  };
}
