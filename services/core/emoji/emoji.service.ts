// Custom emoji (level 3, contract §14): POST /emoji (multipart name + image),
// GET /emoji, DELETE /emoji/{name}, and the stored image. The upload is checked
// by its bytes (file-type), kept as sent, and stored at most 128×128 by the
// worker (emoji.jobs.ts); created and deleted are audited in their transaction.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { fileTypeFromBuffer } from 'file-type';
import type { Actor } from '../../../shared/auth.js';
import { AppError, forbidden, invalid, notFound } from '../../../shared/errors.js';
import { decodeCursor, pageOf, type PageQuery } from '../../../shared/http/envelope.js';
import { recordJob } from '../../../shared/jobs.js';
import type { Runtime } from '../../../shared/runtime.js';
import { recordAudit } from '../audit/audit.store.js';
import { SAFE_DOWNLOAD_HEADERS } from '../files/files.service.js';
import { presentCustomEmoji } from './emoji.presenter.js';
import { EMOJI_NAME, EMOJI_TYPES } from './emoji.schemas.js';
import * as store from './emoji.store.js';
import { readEmojiUpload } from './emoji.upload.js';
import { isStandardShortcode } from './standard-shortcodes.js';

export const emojiKey = (workspaceId: string, id: string, what: 'original' | 'image') => `emoji/${workspaceId}/${id}/${what}`;

const nameTaken = (name: string) => new AppError('name_taken', `name: this workspace has an emoji named "${name}" already`);

export async function createEmoji(rt: Runtime, actor: Actor, req: IncomingMessage) {
  const upload = await readEmojiUpload(req);
  const name = upload.name ?? '';
  if (!EMOJI_NAME.test(name)) throw invalid('name: is required, 1 to 64 of a-z 0-9 _ + -');
  if (isStandardShortcode(name)) throw invalid(`name: "${name}" is a standard emoji shortcode; choose another`);
  const type = (await fileTypeFromBuffer(upload.image))?.mime;
  if (!type || !EMOJI_TYPES.has(type)) throw new AppError('unsupported_media_type', 'image: must be a PNG, GIF, JPEG or WebP image (judged by its content)');
  if (await store.findEmojiNamed(rt.db, actor.workspaceId, name)) throw nameTaken(name);

  const id = randomUUID();
  const key = emojiKey(actor.workspaceId, id, 'original');
  await rt.s3.send(new PutObjectCommand({ Bucket: rt.config.s3.bucket, Key: key, Body: upload.image, ContentType: type }));
  try {
    const row = await rt.db.transaction(async (trx) => {
      const created = await store.insertEmoji(trx, { id, workspace_id: actor.workspaceId, name, original_key: key, created_by: actor.userId });
      if (!created) throw nameTaken(name); // taken meanwhile
      await recordAudit(trx, { workspaceId: actor.workspaceId, action: 'emoji.created', actor, target: { type: 'emoji', id }, details: { name } });
      await recordJob(rt, trx, 'emoji.process', { emojiId: id });
      return created;
    });
    return presentCustomEmoji(row, rt.config.publicBaseUrl);
  } catch (err) {
    // Nothing refers to the stored upload: it goes too.
    await rt.s3.send(new DeleteObjectCommand({ Bucket: rt.config.s3.bucket, Key: key })).catch(() => undefined);
    throw err;
  }
}

export async function listEmoji(rt: Runtime, actor: Actor, q: PageQuery) {
  const rows = await store.listEmoji(rt.db, { workspaceId: actor.workspaceId, before: decodeCursor(q.cursor), limit: q.limit });
  return pageOf(rows, q.limit, (row) => presentCustomEmoji(row, rt.config.publicBaseUrl));
}

/** Its creator, owners and admins delete an emoji. */
const canDeleteEmoji = (actor: Actor, row: { created_by: string | null }) => row.created_by === actor.userId || actor.role === 'owner' || actor.role === 'admin';

export async function deleteEmoji(rt: Runtime, actor: Actor, name: string) {
  const row = await store.findEmojiNamed(rt.db, actor.workspaceId, name);
  if (!row) throw notFound('Emoji');
  if (!canDeleteEmoji(actor, row)) throw forbidden('only its creator, an admin or an owner deletes an emoji');
  await rt.db.transaction(async (trx) => {
    const deleted = await store.deleteEmoji(trx, row.id);
    if (!deleted) throw notFound('Emoji');
    await recordAudit(trx, { workspaceId: actor.workspaceId, action: 'emoji.deleted', actor, target: { type: 'emoji', id: row.id }, details: { name } });
    // The stored objects go with the worker's job for removed objects (a retry of a deletion is a no-op).
    const keys = [deleted.original_key, ...(deleted.image_key ? [deleted.image_key] : [])];
    await recordJob(rt, trx, 'file.remove_objects', { fileId: `emoji-${row.id}`, keys });
  });
}

/** The stored image, for an <img>: needs no key (its id is unguessable), served as passive bytes. */
export async function emojiImage(rt: Runtime, id: string) {
  const row = await store.findEmoji(rt.db, id);
  if (!row || row.status !== 'ready' || !row.image_key) throw notFound('Emoji');
  const res = await rt.s3.send(new GetObjectCommand({ Bucket: rt.config.s3.bucket, Key: row.image_key }));
  return {
    body: res.Body as Readable,
    headers: {
      ...SAFE_DOWNLOAD_HEADERS,
      'Content-Type': 'image/webp',
      ...(res.ContentLength !== undefined ? { 'Content-Length': String(res.ContentLength) } : {}),
      // A new upload is a new id: the bytes at one address never change.
      'Cache-Control': 'public, max-age=86400',
    },
  };
}
