// Work whose job Redis lost (wiped, or failed over without persistence) is
// found again in Postgres: a file still `processing`, or a compatible webhook
// post still unrendered (a webhook_renders row), a scheduled message or
// reminder still `scheduled` past its time, a custom emoji still `processing`,
// JOB_RECONCILE_AFTER seconds
// after it was recorded (or due) gets its job recorded again in the job outbox, unless
// one waits there already. Handlers are idempotent and job ids come from the
// payload, so a job still queued or running is not doubled: enqueueing an id
// the queue holds is a no-op.
import type { Runtime } from '../../shared/runtime.js';

/** At most this many jobs recorded per pass (the rest follow on the next). */
const LIMIT = 1000;

export async function reconcileJobs(rt: Runtime): Promise<number> {
  const after = rt.config.jobReconcileAfter;
  const { rows } = await rt.db.raw<{ rows: unknown[] }>(
    `INSERT INTO job_outbox (name, payload)
     (SELECT 'file.postprocess', jsonb_build_object('fileId', f.id) FROM files f
       WHERE f.status = 'processing' AND f.created_at < now() - make_interval(secs => ?)
         AND NOT EXISTS (SELECT 1 FROM job_outbox j WHERE j.name = 'file.postprocess' AND j.payload = jsonb_build_object('fileId', f.id))
       ORDER BY f.created_at LIMIT ${LIMIT})
     UNION ALL
     (SELECT 'webhook.render', jsonb_build_object('messageId', r.message_id) FROM webhook_renders r
       WHERE r.created_at < now() - make_interval(secs => ?)
         AND NOT EXISTS (SELECT 1 FROM job_outbox j WHERE j.name = 'webhook.render' AND j.payload = jsonb_build_object('messageId', r.message_id))
       ORDER BY r.created_at LIMIT ${LIMIT})
     UNION ALL
     (SELECT 'scheduled_message.send', jsonb_build_object('scheduledMessageId', m.id, 'at', (extract(epoch FROM m.send_at) * 1000)::bigint) FROM scheduled_messages m
       WHERE m.status = 'scheduled' AND m.send_at < now() - make_interval(secs => ?)
         AND NOT EXISTS (SELECT 1 FROM job_outbox j WHERE j.name = 'scheduled_message.send' AND j.payload->>'scheduledMessageId' = m.id::text)
       ORDER BY m.send_at LIMIT ${LIMIT})
     UNION ALL
     (SELECT 'reminder.send', jsonb_build_object('reminderId', r.id, 'at', (extract(epoch FROM r.remind_at) * 1000)::bigint) FROM reminders r
       WHERE r.status = 'scheduled' AND r.remind_at < now() - make_interval(secs => ?)
         AND NOT EXISTS (SELECT 1 FROM job_outbox j WHERE j.name = 'reminder.send' AND j.payload->>'reminderId' = r.id::text)
       ORDER BY r.remind_at LIMIT ${LIMIT})
     UNION ALL
     (SELECT 'emoji.process', jsonb_build_object('emojiId', e.id) FROM custom_emoji e
       WHERE e.status = 'processing' AND e.created_at < now() - make_interval(secs => ?)
         AND NOT EXISTS (SELECT 1 FROM job_outbox j WHERE j.name = 'emoji.process' AND j.payload = jsonb_build_object('emojiId', e.id))
       ORDER BY e.created_at LIMIT ${LIMIT})
     RETURNING id`,
    [after, after, after, after, after],
  );
  if (rows.length > 0) {
    rt.log.info({ jobs: rows.length }, 'reconcile: recorded jobs again for unfinished work');
    rt.jobs.recorded();
  }
  return rows.length;
}

/** Reconciles every half JOB_RECONCILE_AFTER (between 1 and 30 s); returns the stop function. */
export function startReconciler(rt: Runtime): () => Promise<void> {
  const everyMs = Math.min(30_000, Math.max(1000, (rt.config.jobReconcileAfter * 1000) / 2));
  let stopped = false;
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = reconcileJobs(rt).catch((err) => rt.log.warn({ err: (err as Error).message }, 'reconcile: will try again'));
  }, everyMs);
  timer.unref();
  return async () => {
    if (stopped) return;
    stopped = true;
    clearInterval(timer);
    await running;
  };
}
