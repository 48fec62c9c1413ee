// The worker role: BullMQ consumer of the one job queue. Refuses to boot when
// a job has no handler (or a handler no job); finishes jobs in flight on close, for a while
// (services/worker/close.ts).
import { Worker, type Job } from 'bullmq';
import client from 'prom-client';
import { JOB_NAMES, QUEUE_NAME, queueCounts, queuePrefix, type JobHandlers, type JobName } from '../../shared/jobs.js';
import { createRedis } from '../../shared/redis.js';
import type { Runtime } from '../../shared/runtime.js';
import { handlers as defaultHandlers } from '../core/jobs.js';
import { startReconciler } from './reconcile.js';
import { closeWorker, jobsInFlight } from './close.js';
import { tracing } from '../../shared/tracing.js';

export interface WorkerOptions {
  redisUrl: string;
  /** Tests wrap handlers to simulate crashes. */
  handlers?: JobHandlers;
  concurrency?: number;
  /** How long a job's lock lasts without renewal; a crashed worker's job is retried after it. */
  lockDuration?: number;
  /** How often stalled jobs (lock lost) are looked for. */
  stalledInterval?: number;
  /** How long close waits for jobs in flight (CLOSE_GRACE_MS). */
  closeGraceMs?: number;
}

export function checkHandlers(handlers: Record<string, unknown>): void {
  const missing = JOB_NAMES.filter((name) => typeof handlers[name] !== 'function');
  const unknown = Object.keys(handlers).filter((name) => !(JOB_NAMES as readonly string[]).includes(name));
  if (missing.length || unknown.length) {
    throw new Error(
      `worker: ${missing.length ? `no handler for job(s) ${missing.join(', ')}` : ''}${missing.length && unknown.length ? '; ' : ''}${
        unknown.length ? `handler(s) for unknown job(s) ${unknown.join(', ')}` : ''
      }`,
    );
  }
}

export async function startWorker(rt: Runtime, o: WorkerOptions) {
  const handlers = o.handlers ?? defaultHandlers;
  checkHandlers(handlers);
  const connection = createRedis(o.redisUrl, 'axid-worker');
  connection.on('error', (err) => rt.log.debug({ err: err.message }, 'worker redis connection error'));

  const running = jobsInFlight();
  const runJob = async (job: Job) => {
    const name = job.name as JobName;
    const handler = handlers[name] as JobHandlers[JobName] | undefined;
    if (!handler) throw new Error(`no handler for job ${job.name}`);
    const attempts = job.opts.attempts ?? 1;
    const attempt = job.attemptsMade + 1;
    const timer = rt.metrics.jobDuration.startTimer({ job: job.name });
    try {
      await (handler as (rt: Runtime, p: unknown, c: { attempt: number; lastAttempt: boolean }) => Promise<void>)(rt, job.data, {
        attempt,
        lastAttempt: attempt >= attempts,
      });
      timer({ outcome: 'completed' });
    } catch (err) {
      timer({ outcome: 'failed' });
      throw err;
    }
    rt.log.debug({ job: job.name, id: job.id, attempt }, 'job done');
  };
  // A job recorded by a traced change continues its trace (jobs.ts: BullMQ's telemetry metadata).
  const traced = (job: Job) => {
    const parent = tracing ? job.opts.telemetry?.metadata : undefined;
    return tracing && parent ? tracing.run(`job ${job.name}`, 'consumer', parent, { 'axid.job.name': job.name, 'axid.job.attempt': job.attemptsMade + 1 }, () => runJob(job)) : runJob(job);
  };
  const worker = new Worker(
    QUEUE_NAME,
    (job: Job) => running.track(traced(job)),
    {
      connection,
      prefix: queuePrefix(rt.config),
      concurrency: o.concurrency ?? 4,
      // A job whose worker died (SIGKILL, OOM) is taken up again once its lock
      // lapses and a stalled check sees it: within about 15 s, not a minute.
      // The lock is renewed every half lockDuration while the job runs.
      lockDuration: o.lockDuration ?? 10_000,
      stalledInterval: o.stalledInterval ?? 5_000,
      maxStalledCount: 2,
    },
  );
  worker.on('failed', (job, err) =>
    rt.log.warn({ job: job?.name, id: job?.id, attempt: job?.attemptsMade, err: err.message }, 'job attempt failed'),
  );
  worker.on('error', (err) => rt.log.warn({ err: err.message }, 'worker error'));
  await worker.waitUntilReady();
  const stopReconciler = startReconciler(rt);

  // Queue depth is read when /metrics is scraped, not polled.
  new client.Gauge({
    name: 'axid_queue_depth',
    help: 'Jobs waiting, delayed or active in the queue',
    labelNames: ['state'] as const,
    registers: [rt.metrics.registry],
    async collect() {
      const counts = await queueCounts(rt);
      for (const [state, n] of Object.entries(counts)) this.set({ state }, n);
    },
  });

  return {
    worker,
    /** Waits for the jobs in flight, then lets go of Redis. */
    async close() {
      rt.metrics.registry.removeSingleMetric('axid_queue_depth');
      await stopReconciler();
      await closeWorker(worker, running, rt.log, o.closeGraceMs);
      await connection.quit().catch(() => connection.disconnect());
    },
  };
}
