// Closing a BullMQ worker with a bound. BullMQ's close() waits for the jobs in
// flight without one: a job stuck on a dependency that no longer answers (seen
// with a Redis Cluster stopped under a closing test stack) held the close, and
// with it BullMQ's lock-renewal timer and the whole process, for ever.
import type { Worker } from 'bullmq';
import type { Logger } from '../../shared/logger.js';

/** How long jobs in flight get to finish when a worker closes (Kubernetes waits 30 s after SIGTERM by default). */
export const CLOSE_GRACE_MS = 10_000;

/** The promises of a worker's running processors, so that closing can wait for them with a bound. */
export function jobsInFlight() {
  const running = new Set<Promise<unknown>>();
  return {
    track<T>(job: Promise<T>): Promise<T> {
      running.add(job);
      job.then(
        () => running.delete(job),
        () => running.delete(job),
      );
      return job;
    },
    /** Whether every job in flight ended within `ms`. */
    async ended(ms: number): Promise<boolean> {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled([...running]), new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
      clearTimeout(timer);
      return running.size === 0;
    },
  };
}

/**
 * Takes no new job, gives the jobs in flight CLOSE_GRACE_MS, then closes
 * without waiting further. A job cut off keeps no lock: it is taken up again
 * as stalled, and jobs are safe to run twice (shared/jobs.ts).
 */
export async function closeWorker(worker: Worker, jobs: ReturnType<typeof jobsInFlight>, log: Logger, graceMs = CLOSE_GRACE_MS): Promise<void> {
  await worker.pause(true);
  if (!(await jobs.ended(graceMs))) log.warn({ queue: worker.name, graceMs }, 'worker closing: jobs still running after the grace period are left to be retried');
  await worker.close(true);
}
