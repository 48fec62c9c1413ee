import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { Actor } from '../../../shared/auth.js';
import { AppError, notFound } from '../../../shared/errors.js';
import { recordJob } from '../../../shared/jobs.js';
import type { Runtime } from '../../../shared/runtime.js';
import { presentFile, type FileRow } from './files.presenter.js';
import * as store from './files.store.js';
import { receiveUpload } from './files.upload.js';

/** Presigned download links live at most 15 minutes (README.md, "Files"). */
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
  // Should that fail (the database away or hung: it then never commits, see
  // docs/reliability.md), the stored object goes too: nothing refers to it.
  const row = await recordUpload(rt, actor, id, key, received).catch(async (err: unknown) => {
    await rt.s3
      .send(new DeleteObjectCommand({ Bucket: rt.config.s3.bucket, Key: key }), { abortSignal: AbortSignal.timeout(STORAGE_CLEANUP_MS) })
      .catch((cleanup: Error) => rt.log.warn({ err: cleanup.message, file_id: id }, 'could not remove the object of a failed upload'));
    throw err;
  });
  return presentFile(row);
}

/** How long removing the object of a failed upload may hold its answer. */
const STORAGE_CLEANUP_MS = 5_000;

function recordUpload(rt: Runtime, actor: Actor, id: string, key: string, received: { name: string; size: number; claimedType: string }) {
  return rt.db.transaction(async (trx) => {
    const inserted = await store.insertFile(trx, {
      id,
      workspace_id: actor.workspaceId,
      uploader_id: actor.userId,
      name: received.name,
      size: received.size,
      content_type: received.claimedType,
      storage_key: key,
    });
    await recordJob(rt, trx, 'file.postprocess', { fileId: id });
    return inserted;
  });
}

/**
 * Metadata and a short-lived download link, for members of the file's
 * workspace. A file belongs to no conversation, so a key limited to
 * conversations (shared/scopes.ts) sees only its own user's uploads: a file
 * someone shared in another channel is absent to it.
 */
export async function getFile(rt: Runtime, actor: Actor, fileId: string) {
  const row = await store.findFileInWorkspace(rt.db, actor.workspaceId, fileId);
  if (!row || (actor.conversationIds !== null && row.uploader_id !== actor.userId)) throw notFound('File');
  return { ...presentFile(row), download_url: await downloadUrl(rt, row) };
}

/**
 * With real S3 (`S3_ENDPOINT` set) a presigned GET. The embedded store listens
 * on a random local port, so its links would die at the next restart and never
 * work from another machine: its files are served by the API itself, under
 * PUBLIC_BASE_URL, through a link signed with a key kept in DATA_DIR.
 */
async function downloadUrl(rt: Runtime, row: FileRow): Promise<string> {
  if (!rt.config.s3.endpoint) {
    const expires = Math.floor(Date.now() / 1000) + DOWNLOAD_URL_SECONDS;
    const sig = downloadSignature(rt.config.dataDir, row.id, expires);
    return `${rt.config.publicBaseUrl}/api/v1/files/${row.id}/download?expires=${expires}&sig=${sig}`;
  }
  return getSignedUrl(
    rt.s3,
    new GetObjectCommand({
      Bucket: rt.config.s3.bucket,
      Key: row.storage_key,
      ResponseContentDisposition: contentDisposition(row.name),
      ResponseContentType: safeContentType(row.content_type),
    }),
    { expiresIn: DOWNLOAD_URL_SECONDS },
  );
}

const signingKeys = new Map<string, Buffer>();

/** 32 random bytes in DATA_DIR, made once: links stay valid across restarts, like the files beside them. */
function signingKey(dataDir: string): Buffer {
  const file = path.resolve(dataDir, 'download-signing.key');
  let key = signingKeys.get(file);
  if (key) return key;
  try {
    key = readFileSync(file);
  } catch {
    mkdirSync(path.dirname(file), { recursive: true });
    try {
      writeFileSync(file, randomBytes(32), { flag: 'wx', mode: 0o600 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err; // another process made it first
    }
    key = readFileSync(file);
  }
  signingKeys.set(file, key);
  return key;
}

const downloadSignature = (dataDir: string, fileId: string, expires: number) =>
  createHmac('sha256', signingKey(dataDir)).update(`${fileId}.${expires}`).digest('base64url');

const badLink = () => new AppError('forbidden', 'this download link is invalid or has expired: ask for the file again (GET /api/v1/files/{id})');

/** A file's bytes through a signed link (embedded store only), as an attachment that cannot render here. */
export async function downloadFile(rt: Runtime, fileId: string, q: { expires?: string; sig?: string }) {
  if (rt.config.s3.endpoint) throw notFound('File'); // real S3 serves its own presigned links
  const expires = Number(q.expires);
  if (!Number.isSafeInteger(expires) || expires < Date.now() / 1000 || typeof q.sig !== 'string') throw badLink();
  const expected = Buffer.from(downloadSignature(rt.config.dataDir, fileId, expires));
  const given = Buffer.from(q.sig);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw badLink();
  const row = await store.findFile(rt.db, fileId);
  if (!row) throw notFound('File');
  const res = await rt.s3.send(new GetObjectCommand({ Bucket: rt.config.s3.bucket, Key: row.storage_key }));
  return {
    body: res.Body as Readable,
    headers: {
      'Content-Type': safeContentType(row.content_type),
      'Content-Disposition': contentDisposition(row.name),
      ...(res.ContentLength !== undefined ? { 'Content-Length': String(res.ContentLength) } : {}),
      ...SAFE_DOWNLOAD_HEADERS,
    },
  };
}

/** Served bytes never run in our origin: no sniffing, and a sandbox with nothing allowed. */
export const SAFE_DOWNLOAD_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy': "sandbox; default-src 'none'",
  'Cache-Control': 'private, no-store',
} as const;

/** Types a browser shows without running anything; every other type is served as bytes. */
const PASSIVE_TYPES = /^(image\/(png|jpeg|gif|webp|avif|tiff|bmp)|audio\/[a-z0-9.+-]+|video\/[a-z0-9.+-]+|text\/(plain|csv)|application\/(json|pdf|zip|gzip|x-tar|x-7z-compressed|octet-stream))$/;

/**
 * The type a download is served with: passive types as stored; HTML, SVG,
 * XML, scripts and anything unknown as `application/octet-stream`, so that
 * even a browser that ignored `attachment` could not render them here. The
 * File object keeps the real type.
 */
export const safeContentType = (type: string) => (PASSIVE_TYPES.test(type) ? type : 'application/octet-stream');

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
