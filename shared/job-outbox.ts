// The job publisher: moves jobs recorded in Postgres (job_outbox, written by
// jobs.ts recordJob in the transaction of the change) to the BullMQ queue.
// Every process that writes (api, worker) runs one. Rows are claimed with
// FOR UPDATE SKIP LOCKED, enqueued, and deleted in that same transaction, so
// publishers never hand over one row at the same time and a row leaves the
// outbox only once Redis took its job. A job enqueued twice (a publisher died
// between the enqueue and its commit) is a no-op: job ids come from payloads.
// Commits in this process wake the publisher at once; a poll every second
// picks up other processes' rows and whatever waited while Redis was away.
// Kept apart from the event relay (relay/outbox-relay.ts): events need one order
// and one elected relay, jobs neither.
import { enqueueRecorded, type JobName, type JobPayloads } from './jobs.js';
import { answering } from './redis.js';
import type { Runtime } from './runtime.js';
import { SerialRun } from './serial-run.js';
import { tracing } from './tracing.js';

const POLL_MS = 1000;
const BATCH = 200;
/** An enqueue not answered by then is rolled back (its rows stay) and tried again later. */
const ENQUEUE_TIMEOUT_MS = 5000;

export class JobOutboxPublisher {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly running = new SerialRun(
    () => this.drain().catch((err) => this.rt.log.warn({ err: (err as Error).message }, 'job publisher: retrying')),
    () => !this.stopped,
  );
  private unsubscribe: (() => void) | null = null;

  constructor(private readonly rt: Runtime) {}

  start(): void {
    // Woken by a request's commit: its work is not the request's (its trace goes with each job instead).
    this.unsubscribe = this.rt.jobs.subscribe(() => void (tracing ? tracing.detached(() => this.publish()) : this.publish()));
    this.poll();
  }

  private poll(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.publish().finally(() => this.poll());
    }, POLL_MS);
    this.timer.unref();
  }

  /** Publishes what is recorded; one run at a time, a run asked for meanwhile follows it. */
  publish(): Promise<void> {
    return this.running.run();
  }

  private async drain(): Promise<void> {
    for (;;) {
      // Not while Redis is away: the enqueue would wait in ioredis's offline queue.
      if (this.stopped || !answering(this.rt.redis)) return;
      const published = await this.rt.db.transaction(async (trx) => {
        const rows: { id: number; name: JobName; payload: JobPayloads[JobName]; trace_context: string | null; run_at: Date | null }[] = await trx('job_outbox')
          .select('id', 'name', 'payload', 'trace_context', 'run_at')
          .orderBy('id')
          .limit(BATCH)
          .forUpdate()
          .skipLocked();
        if (rows.length === 0) return 0;
        await withTimeout(enqueueRecorded(this.rt, rows), ENQUEUE_TIMEOUT_MS);
        await trx('job_outbox')
          .whereIn(
            'id',
            rows.map((r) => r.id),
          )
          .delete();
        return rows.length;
      });
      if (published < BATCH) return;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.unsubscribe?.();
    await this.running.current;
  }
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer from Redis in ${ms} ms`)), ms)));
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
