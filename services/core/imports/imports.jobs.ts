// `import.slack`, run by the worker: the uploaded export is copied from
// storage to a temporary file under DATA_DIR (yauzl reads a ZIP's directory at its end, so
// it needs a file it can seek in), then imported. A worker that dies midway
// loses its job's lock; BullMQ hands the job to another worker (or this one
// restarted), which runs it again from the start: everything already written
// is in slack_import_map, so it carries on where the other stopped.
import { createWriteStream, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand } from '@aws-sdk/client-s3';
import { AppError } from '../../../shared/errors.js';
import { recordEvents } from '../../../shared/events.js';
import { ownersAndAdmins } from './slack-import.store.js';
import { recordAudit } from '../audit/audit.store.js';
import type { JobHandler } from '../../../shared/jobs.js';
import type { Runtime } from '../../../shared/runtime.js';
import { importDepsOf } from './imports.deps.js';
import type { ImportRow } from './imports.presenter.js';
import { importSlackExport, type ImportCounts } from './slack-import.js';

const ZERO: ImportCounts = { users: 0, channels: 0, dms: 0, messages: 0, replies: 0, reactions: 0, pins: 0, files: 0 };

const addCounts = (a: Partial<ImportCounts>, b: ImportCounts): ImportCounts =>
  Object.fromEntries(Object.entries(b).map(([k, v]) => [k, v + (a[k as keyof ImportCounts] ?? 0)])) as unknown as ImportCounts;

export const runSlackImport: JobHandler<'import.slack'> = async (rt, { importId }, job) => {
  const row = await rt.db<ImportRow>('imports').where({ id: importId }).first();
  if (!row || row.status === 'finished' || row.status === 'failed') return;
  // What an earlier attempt added (kept exact by each of its transactions) is counted with what this one adds.
  const before = row.counts ?? {};
  await rt.db('imports').where({ id: importId }).update({ status: 'running', started_at: rt.db.raw('coalesce(started_at, now())') });
  // Under DATA_DIR (the worker pods' larger scratch volume; /tmp is small there).
  mkdirSync(path.join(rt.config.dataDir, 'imports'), { recursive: true });
  const dir = mkdtempSync(path.join(rt.config.dataDir, 'imports', 'slack-'));
  const file = path.join(dir, 'export.zip');
  try {
    const object = await rt.s3.send(new GetObjectCommand({ Bucket: rt.config.s3.bucket, Key: row.storage_key }));
    await pipeline(object.Body as Readable, createWriteStream(file));
    const report = await importSlackExport(
      importDepsOf(rt),
      file,
      {
        workspaceId: row.workspace_id,
        saveProgress: async (trx, counts) => {
          await trx('imports').where({ id: importId }).update({ counts: JSON.stringify(addCounts(before, counts)) });
        },
      },
      importId,
    );
    await finish(rt, importId, { status: 'finished', counts: JSON.stringify(addCounts(before, report.counts)), report: JSON.stringify(report), error: null });
    await removeUpload(rt, row);
  } catch (err) {
    // A broken export fails for good, naming the file; anything else (storage, the database) is tried again.
    if (err instanceof AppError || job.lastAttempt) {
      const message = err instanceof AppError ? err.message : 'the import stopped after several attempts; see the worker log';
      rt.log.warn({ import_id: importId, err: (err as Error).message }, 'import failed');
      await rt.db.transaction(async (trx) => {
        await trx('imports').where({ id: importId }).update({ status: 'failed', error: message, finished_at: trx.fn.now() });
        const to = await ownersAndAdmins(trx, row.workspace_id);
        if (to.length) {
          await recordEvents(rt, trx, [
            { type: 'import.finished', to: { scope: 'users', workspace_id: row.workspace_id, user_ids: to }, data: { import_id: importId, source: 'slack', status: 'failed', error: message, counts: addCounts(before, ZERO) } },
          ]);
        }
        await recordAudit(trx, { workspaceId: row.workspace_id, action: 'import.finished', actor: null, target: { type: 'import', id: importId }, details: { source: 'slack', status: 'failed', error: message } });
      });
      await removeUpload(rt, row);
      return;
    }
    throw err;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

async function finish(rt: Runtime, importId: string, patch: Record<string, unknown>) {
  await rt.db('imports').where({ id: importId }).update({ ...patch, finished_at: rt.db.fn.now() });
}

/** The upload holds the team's whole history: it goes once the import is done with it. */
async function removeUpload(rt: Runtime, row: ImportRow) {
  await rt.s3.send(new DeleteObjectCommand({ Bucket: rt.config.s3.bucket, Key: row.storage_key })).catch((err: Error) => rt.log.warn({ err: err.message, import_id: row.id }, 'could not remove an import upload'));
}
