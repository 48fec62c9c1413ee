// Imports started through the API (level 3, contract §13): an owner uploads
// the export (streamed to storage, never whole in memory), the worker runs it
// as a job (imports.jobs.ts), the owner follows it with GET /imports/{id}.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import type { Actor } from '../../../shared/auth.js';
import { forbidden, notFound } from '../../../shared/errors.js';
import { isUuid } from '../../../shared/ids.js';
import { recordJob } from '../../../shared/jobs.js';
import type { Runtime } from '../../../shared/runtime.js';
import { receiveUpload } from '../files/files.upload.js';
import { recordAudit } from '../audit/audit.store.js';
import { presentImport, type ImportRow } from './imports.presenter.js';

/** 20 GiB: a large Slack export with its files still fits; S3 multipart takes up to 5 TB. */
export const MAX_IMPORT_BYTES = 20 * 1024 * 1024 * 1024;

export const importUploadKey = (workspaceId: string, importId: string) => `imports/${workspaceId}/${importId}.zip`;

const ownersOnly = (actor: Actor) => {
  if (actor.role !== 'owner' || actor.isAgent) throw forbidden('only workspace owners import');
};

export async function startSlackImport(rt: Runtime, actor: Actor, req: IncomingMessage) {
  ownersOnly(actor);
  const id = randomUUID();
  const key = importUploadKey(actor.workspaceId, id);
  await receiveUpload(req, { s3: rt.s3, bucket: rt.config.s3.bucket, key, limit: MAX_IMPORT_BYTES });
  try {
    const row = await rt.db.transaction(async (trx) => {
      const [inserted] = await trx<ImportRow>('imports')
        .insert({ id, workspace_id: actor.workspaceId, created_by: actor.userId, source: 'slack', storage_key: key, counts: JSON.stringify({}) as never })
        .returning('*');
      await recordJob(rt, trx, 'import.slack', { importId: id });
      await recordAudit(trx, { workspaceId: actor.workspaceId, action: 'import.started', actor, target: { type: 'import', id }, details: { source: 'slack' } });
      return inserted as ImportRow;
    });
    rt.log.info({ import_id: id, by: actor.userId }, 'import started');
    return presentImport(row);
  } catch (err) {
    await rt.s3.send(new DeleteObjectCommand({ Bucket: rt.config.s3.bucket, Key: key })).catch(() => undefined);
    throw err;
  }
}

export async function getImport(rt: Runtime, actor: Actor, importId: string) {
  ownersOnly(actor);
  const row = isUuid(importId) ? await rt.db<ImportRow>('imports').where({ id: importId, workspace_id: actor.workspaceId }).first() : undefined;
  if (!row) throw notFound('Import');
  return presentImport(row);
}

