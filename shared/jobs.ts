// Background jobs: the one map of job name → payload, and how the API hands a
// job to the worker: recordJob writes it to the job outbox in the caller's
// transaction, and the job publisher (job-outbox.ts) enqueues it once
// committed. Job ids are derived from the payload, so enqueueing the same work
// twice is a no-op and a retry finds its own earlier attempt.
import { Queue, type JobsOptions } from 'bullmq';
import { commitDeadline, type Db, type Knex } from './db/knex.js';
import { keys } from './redis.js';
import type { Runtime } from './runtime.js';
import type { JobWakeups } from './job-wakeups.js';
import type { Config } from './config.js';
import type { FeatureLevel } from './feature-level.js';
import { tracing, type TraceCarrier } from './tracing.js';

export interface JobPayloads {
  /** Hash, sniff the type, read image dimensions and thumbnail an upload. */
  'file.postprocess': { fileId: string };
  /** Level 3: delete a removed file's stored objects (its row is gone already). */
  'file.remove_objects': { fileId: string; keys: string[] };
  /** Render a compatible webhook post's attachments into its message. */
  'webhook.render': { messageId: string };
  /** Level 3, repeating: finish streamed replies left alone for STREAMING_TIMEOUT. */
  'messages.finish_stale_streams': Record<string, never>;
  /** Level 3, repeating: delete Idempotency-Key answers older than 24 h. */
  'idempotency.sweep': Record<string, never>;
  /** Level 3, repeating: index messages written where search did not exist (migration 090). */
  'search.backfill': Record<string, never>;
  /** Level 3: fetch the link previews of a message (services/core/unfurls); linksKey names its links, so an edit that changes them is a new job. */
  'message.unfurl': { messageId: string; linksKey: string };
  /** Level 3, repeating, with SMTP_URL: email the people who are away about unread mentions and DMs (services/core/email). */
  'email.notify_away': Record<string, never>;
  /** Any level, daily: delete messages past their retention and audit entries past AUDIT_RETENTION_DAYS (contract §16). */
  'retention.sweep': Record<string, never>;
  /** Level 3: run an uploaded Slack export's import (services/core/imports); resumable, so a restarted worker carries on. */
  'import.slack': { importId: string };
  /** Level 3: post a scheduled message at its send_at (`at`: the time it was recorded for, part of the job id). */
  'scheduled_message.send': { scheduledMessageId: string; at: number };
  /** Level 3: send a reminder's DM at its remind_at. */
  'reminder.send': { reminderId: string; at: number };
  /** Level 3: store a custom emoji's upload at most 128×128 and mark it ready. */
  'emoji.process': { emojiId: string };
}

export type JobName = keyof JobPayloads;

export const JOB_NAMES = ['file.postprocess', 'file.remove_objects', 'webhook.render', 'messages.finish_stale_streams', 'idempotency.sweep', 'search.backfill', 'retention.sweep', 'import.slack', 'scheduled_message.send', 'reminder.send', 'emoji.process', 'message.unfurl', 'email.notify_away'] as const satisfies readonly JobName[];

/** One queue for every job; the job name picks the handler. */
export const QUEUE_NAME = 'jobs';

/**
 * BullMQ key prefix: under the stack's Redis prefix, so test runs never
 * collide. On a Redis Cluster it is a hash tag (BullMQ's rule: its scripts
 * touch several keys of a queue, which must share a slot).
 */
export const queuePrefix = (config: { redisKeyPrefix: string; redisCluster: boolean }) =>
  config.redisCluster ? `{${keys(config.redisKeyPrefix).queue}}` : keys(config.redisKeyPrefix).queue;

// BullMQ refuses custom ids that contain ':'.
const JOB_IDS: { [N in JobName]: (p: JobPayloads[N]) => string } = {
  'file.postprocess': (p) => `file.postprocess-${p.fileId}`,
  'file.remove_objects': (p) => `file.remove_objects-${p.fileId}`,
  'webhook.render': (p) => `webhook.render-${p.messageId}`,
  'messages.finish_stale_streams': () => 'messages.finish_stale_streams',
  'idempotency.sweep': () => 'idempotency.sweep',
  'search.backfill': () => 'search.backfill',
  'retention.sweep': () => 'retention.sweep',
  'import.slack': (p) => `import.slack-${p.importId}`,
  // A new send_at is a new job: the one for the old time finds the row moved and does nothing.
  'scheduled_message.send': (p) => `scheduled_message.send-${p.scheduledMessageId}-${p.at}`,
  'reminder.send': (p) => `reminder.send-${p.reminderId}-${p.at}`,
  'emoji.process': (p) => `emoji.process-${p.emojiId}`,
  'email.notify_away': () => 'email.notify_away',
  'message.unfurl': (p) => `message.unfurl-${p.messageId}-${p.linksKey}`,
};

/**
 * Jobs the worker runs on a timer (a BullMQ job scheduler each, shared by
 * every worker: one run per period, wherever it lands), from the level they
 * belong to (services/stack.ts starts them).
 */
export const REPEATING_JOBS: { name: JobName; since: FeatureLevel; everyMs: (config: Config) => number; when?: (config: Config) => boolean }[] = [
  // Often enough that a reply is finished soon after its timeout: a tenth of it, 1 s to 60 s.
  { name: 'messages.finish_stale_streams', since: 3, everyMs: (c) => Math.min(60_000, Math.max(1000, c.streamingTimeout * 100)) },
  { name: 'idempotency.sweep', since: 3, everyMs: () => 3600_000 },
  // Only a level switch leaves work for it; at level 3 every post is indexed as it is written.
  { name: 'search.backfill', since: 3, everyMs: () => 300_000 },
  // Retention counts in days: once a day is as fine as it gets (`npm run retention` runs it now).
  { name: 'retention.sweep', since: 2, everyMs: () => 24 * 3600_000 },
  // A quarter of the delay (1 s to 60 s): an email goes out at most a quarter late. Only where mail is set up.
  { name: 'email.notify_away', since: 3, everyMs: (c) => Math.min(60_000, Math.max(1000, (c.email?.notifyDelaySeconds ?? 600) * 250)), when: (c) => c.email !== null },
];

/** Creates or updates the scheduler of a repeating job (idempotent: every worker start does it). */
export async function scheduleRepeating(rt: Runtime, job: (typeof REPEATING_JOBS)[number]): Promise<void> {
  await queueOf(rt).upsertJobScheduler(job.name, { every: job.everyMs(rt.config) }, { name: job.name, data: {}, opts: { attempts: 1, removeOnComplete: true, removeOnFail: 100 } });
}

export const jobId = <N extends JobName>(name: N, payload: JobPayloads[N]) => JOB_IDS[name](payload);

export const DEFAULT_JOB_OPTIONS: JobsOptions = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 500 },
  // Kept a while so that a second enqueue of the same job id stays a no-op.
  removeOnComplete: { age: 24 * 3600, count: 10_000 },
  removeOnFail: { age: 7 * 24 * 3600 },
};

// One Queue per process (per runtime: tests run several stacks in one process).
// It shares the runtime's command connection, which already has
// maxRetriesPerRequest: null.
const queues = new WeakMap<Runtime, Queue>();

function queueOf(rt: Runtime): Queue {
  let queue = queues.get(rt);
  if (!queue) {
    queue = new Queue(QUEUE_NAME, {
      connection: rt.redis,
      prefix: queuePrefix(rt.config),
      defaultJobOptions: DEFAULT_JOB_OPTIONS,
    });
    queue.on('error', (err) => rt.log.warn({ err: err.message }, 'job queue error'));
    queues.set(rt, queue);
  }
  return queue;
}

/** Puts a job on the queue now (the job publisher; services call recordJob). */
export async function enqueue<N extends JobName>(rt: Runtime, name: N, payload: JobPayloads[N]): Promise<void> {
  await queueOf(rt).add(name, payload, { jobId: jobId(name, payload) });
}

/** Puts recorded jobs on the queue in one round trip. */
export async function enqueueRecorded(rt: Runtime, jobs: { name: JobName; payload: JobPayloads[JobName]; trace_context?: TraceCarrier | null; run_at?: Date | null }[]): Promise<void> {
  const now = Date.now();
  await queueOf(rt).addBulk(
    jobs.map(({ name, payload, trace_context, run_at }) => {
      const id = (JOB_IDS[name] as (p: unknown) => string)(payload);
      // A job for later (recordJob's runAt) waits in BullMQ's delayed set for the time left.
      const opts: JobsOptions = run_at ? { jobId: id, delay: Math.max(0, run_at.getTime() - now) } : { jobId: id };
      // The trace of the change that recorded the job, in BullMQ's field for it (the worker continues it).
      return { name, data: payload, opts: trace_context ? { ...opts, telemetry: { metadata: trace_context } } : opts };
    }),
  );
}

/**
 * Records a job in the caller's transaction (the job outbox); the runtime's
 * job publisher enqueues it once committed.
 */
export async function recordJob<N extends JobName>(rt: { jobs: JobWakeups }, trx: Db, name: N, payload: JobPayloads[N], opts: { runAt?: Date } = {}): Promise<void> {
  // Refused at commit past the time the client gives up (migration 011, shared/db/knex.ts commitDeadline).
  const traceContext = tracing ? tracing.active() : undefined;
  const row: Record<string, unknown> = { name, payload: JSON.stringify(payload), commit_by: commitDeadline(trx) };
  if (traceContext) row.trace_context = traceContext;
  if (opts.runAt) row.run_at = opts.runAt;
  await trx('job_outbox').insert(row);
  const t = trx as Knex.Transaction;
  if (t.isTransaction && t.executionPromise) void t.executionPromise.then(() => rt.jobs.recorded(), () => undefined);
  else rt.jobs.recorded(); // autocommit: the insert was the commit
}

/** Jobs by state, for the queue-depth gauge. */
export const queueCounts = (rt: Runtime) => queueOf(rt).getJobCounts('waiting', 'delayed', 'active', 'failed');

/** Closes this runtime's queue, if one was opened (stack shutdown). */
export async function closeQueue(rt: Runtime): Promise<void> {
  const queue = queues.get(rt);
  queues.delete(rt);
  await queue?.close();
}

export interface JobContext {
  /** 1 on the first run. */
  attempt: number;
  /** True when a failure now is final (no retry follows). */
  lastAttempt: boolean;
}

export type JobHandler<N extends JobName> = (rt: Runtime, payload: JobPayloads[N], job: JobContext) => Promise<void>;

/** Exactly one handler per job name; the worker refuses to boot otherwise. */
export type JobHandlers = { [N in JobName]: JobHandler<N> };
