import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { Actor } from '../../../../shared/auth.js';
import { notFound } from '../../../../shared/errors.js';
import { recordJob } from '../../../../shared/jobs.js';
import type { Runtime } from '../../../../shared/runtime.js';
import { presentFile } from './files.presenter.js';
import * as store from './files.store.js';
import { receiveUpload } from './files.upload.js';

/** Presigned download links live at most 15 minutes (contract §4). */
export const DOWNLOAD_URL_SECONDS = 15 * 60;

export const storageKey = (workspaceId: string, fileId: string) => `files/${workspaceId}/${fileId}`;
export const thumbnailKey = (workspaceId: string, fileId: string) => `thumbnails/${workspaceId}/${fileId}.webp`;

/**
 * Streams the upload to storage, then records it as `processing` with its
 * job for the worker. Nothing is written to the database before the bytes are
 * stored, so a refused or broken upload leaves no row behind.
 */
export async function uploadFile(rt: Runtime, actor: Actor, req: IncomingMessage) {
  const id = randomUUID();
  const key = storageKey(actor.workspaceId, id);
  const received = await receiveUpload(req, { s3: rt.s3, bucket: rt.config.s3.bucket, key });
  // The job is recorded with the row: the answer never waits for Redis.
  const row = await rt.db.transaction(async (trx) => {
    const inserted = await store.insertFile(trx, {
      id,
      workspace_id: actor.workspaceId,
      uploader_id: actor.userId,
      name: received.name,
      size: received.size,
      content_type: received.claimedType,
      storage_key: key,
    });
    await recordJob(trx, 'file.postprocess', { fileId: id });
    return inserted;
  });
  return presentFile(row);
}

/** Metadata and a short-lived download link, for members of the file's workspace. */
export async function getFile(rt: Runtime, actor: Actor, fileId: string) {
  const row = await store.findFileInWorkspace(rt.db, actor.workspaceId, fileId);
  if (!row) throw notFound('File');
  const download_url = await getSignedUrl(
    rt.s3,
    new GetObjectCommand({
      Bucket: rt.config.s3.bucket,
      Key: row.storage_key,
      ResponseContentDisposition: contentDisposition(row.name),
      ResponseContentType: row.content_type,
    }),
    { expiresIn: DOWNLOAD_URL_SECONDS },
  );
  return { ...presentFile(row), download_url };
}

/**
 * `attachment` with an ASCII fallback name and, for other names, the exact
 * one in RFC 5987 form (`filename*=UTF-8''...`).
 */
export function contentDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  const plain = `attachment; filename="${ascii}"`;
  if (ascii === name) return plain;
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${plain}; filename*=UTF-8''${encoded}`;
}
