// The retention job (contract §16; docs/operations.md "Retention"): deletes
// the messages older than their conversation's retention, with their replies,
// reactions, edits, search words and files (the stored objects too), and the
// audit log's entries older than AUDIT_RETENTION_DAYS. The worker runs it
// daily (shared/jobs.ts REPEATING_JOBS); `npm run retention` runs it once.
//
// Everything goes in batches of at most `batch` rows a statement and a
// transaction, so no lock is held for long and a post to the same channel
// never waits behind it. Nothing is published: deleting history by age is not
// a change anyone's open view follows (as in Slack); a reload shows it gone.
// The event cursor is untouched (old messages were published long ago, and a
// message gone before the relay read it is simply not read), and history pages
// are keyset pages on seq, which rows leaving never shift.
import { DeleteObjectsCommand } from '@aws-sdk/client-s3';
import type { JobHandler } from '../../../shared/jobs.js';
import type { Runtime } from '../../../shared/runtime.js';
import { pruneAudit } from '../audit/audit.store.js';
import * as store from './retention.store.js';

const DAY_MS = 24 * 3600 * 1000;
/** Rows a statement deletes at most: each transaction stays a few milliseconds. */
export const RETENTION_BATCH = 500;
const OBJECT_DELETE_MS = 30_000;

export interface RetentionCounts {
  channels: number;
  messages: number;
  files: number;
  objects: number;
  audit_entries: number;
}

// `pages` where the caller has Redis (the worker); `npm run retention` has none, and pages it changed go within PAGE_CACHE_SECONDS.
type RetentionRuntime = Pick<Runtime, 'db' | 's3' | 'log' | 'config'> & Partial<Pick<Runtime, 'pages'>>;

/** Deletes stored objects once the rows that named them are committed gone; a failure is logged and leaves only bytes no row names. */
async function deleteObjects(rt: RetentionRuntime, keys: string[]): Promise<number> {
  let deleted = 0;
  for (let i = 0; i < keys.length; i += 1000) {
    const chunk = keys.slice(i, i + 1000);
    try {
      const res = await rt.s3.send(
        new DeleteObjectsCommand({ Bucket: rt.config.s3.bucket, Delete: { Objects: chunk.map((Key) => ({ Key })), Quiet: true } }),
        { abortSignal: AbortSignal.timeout(OBJECT_DELETE_MS) },
      );
      const failed = res.Errors?.length ?? 0;
      if (failed) rt.log.warn({ failed, first: res.Errors?.[0]?.Code }, 'retention: some stored objects could not be deleted');
      deleted += chunk.length - failed;
    } catch (err) {
      rt.log.warn({ err: (err as Error).message, objects: chunk.length }, 'retention: stored objects could not be deleted');
    }
  }
  return deleted;
}

/** Runs retention once over every conversation that has one, and prunes the audit log. */
export async function runRetention(rt: RetentionRuntime, o: { batch?: number; now?: Date } = {}): Promise<RetentionCounts> {
  const batch = o.batch ?? RETENTION_BATCH;
  const now = (o.now ?? new Date()).getTime();
  const counts: RetentionCounts = { channels: 0, messages: 0, files: 0, objects: 0, audit_entries: 0 };

  // One short transaction: delete some messages, then the files they carried; the objects after it commits.
  const deleteStep = async (workspaceId: string, step: (trx: RetentionRuntime['db']) => Promise<store.DeletedMessage[]>) => {
    const { gone, keys } = await rt.db.transaction(async (trx) => {
      const deleted = await step(trx);
      const fileIds = deleted.flatMap((m) => (m.file_id ? [m.file_id] : []));
      const files = await store.deleteFiles(trx, workspaceId, fileIds);
      counts.files += files.count;
      return { gone: deleted.length, keys: files.keys };
    });
    counts.messages += gone;
    if (keys.length) counts.objects += await deleteObjects(rt, keys);
    return gone;
  };

  for (let after = 0; ; ) {
    const channels = await store.retainedChannels(rt.db, after, 500);
    for (const channel of channels) {
      const cutoff = new Date(now - channel.retention_days * DAY_MS);
      let touched = false;
      for (;;) {
        const roots = await store.expiredRoots(rt.db, channel.id, cutoff, batch);
        if (roots.length === 0) break;
        touched = true;
        while ((await deleteStep(channel.workspace_id, (trx) => store.deleteRepliesOf(trx, roots, batch))) === batch);
        await deleteStep(channel.workspace_id, (trx) => store.deleteRoots(trx, roots));
        if (roots.length < batch) break;
      }
      if (touched) {
        counts.channels++;
        // Retention deletes without events: the conversation's kept pages go here.
        await rt.pages?.invalidate([channel.id]);
      }
    }
    if (channels.length < 500) break;
    after = channels[channels.length - 1]!.seq;
  }

  const auditCutoff = new Date(now - rt.config.auditRetentionDays * DAY_MS);
  for (let gone = batch; gone === batch; ) {
    gone = await pruneAudit(rt.db, auditCutoff, batch);
    counts.audit_entries += gone;
  }
  rt.log.info({ ...counts }, 'retention done');
  return counts;
}

export const retentionSweep: JobHandler<'retention.sweep'> = async (rt) => {
  await runRetention(rt);
};
