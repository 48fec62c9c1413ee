// `emoji.process`, run by the worker: the upload, decoded by sharp (every
// frame of an animated GIF or WebP), stored at most 128×128 as WebP; the
// upload as sent is removed. An image sharp cannot decode fails the emoji
// (it is then not listed).
import type { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import sharp from 'sharp';
import type { JobHandler } from '../../../shared/jobs.js';
import { MAX_IMAGE_PIXELS } from '../files/files.jobs.js';
import { EMOJI_EDGE } from './emoji.schemas.js';
import { emojiKey } from './emoji.service.js';
import * as store from './emoji.store.js';

export const processEmoji: JobHandler<'emoji.process'> = async (rt, { emojiId }, job) => {
  const row = await store.findEmoji(rt.db, emojiId);
  if (!row || row.status !== 'processing') return; // deleted, or done by an earlier attempt
  const res = await rt.s3.send(new GetObjectCommand({ Bucket: rt.config.s3.bucket, Key: row.original_key }));
  const chunks: Buffer[] = [];
  for await (const chunk of res.Body as Readable) chunks.push(chunk as Buffer);
  let image: Buffer;
  try {
    image = await sharp(Buffer.concat(chunks), { animated: true, limitInputPixels: MAX_IMAGE_PIXELS, failOn: 'error' })
      .resize(EMOJI_EDGE, EMOJI_EDGE, { fit: 'inside', withoutEnlargement: true })
      .webp({ quality: 90 })
      .toBuffer();
  } catch (err) {
    rt.log.warn({ err: (err as Error).message, emoji_id: emojiId }, 'custom emoji could not be decoded');
    await store.finishProcessing(rt.db, emojiId, { status: 'failed' });
    return;
  }
  const key = emojiKey(row.workspace_id, row.id, 'image');
  try {
    await rt.s3.send(new PutObjectCommand({ Bucket: rt.config.s3.bucket, Key: key, Body: image, ContentType: 'image/webp' }));
  } catch (err) {
    if (!job.lastAttempt) throw err; // storage hiccup: retried with backoff
    await store.finishProcessing(rt.db, emojiId, { status: 'failed' });
    return;
  }
  const done = await store.finishProcessing(rt.db, emojiId, { status: 'ready', image_key: key });
  // Ready: the upload as sent is no longer needed. Deleted meanwhile: neither is the image just stored.
  const unneeded = done ? [row.original_key] : [key];
  for (const Key of unneeded) await rt.s3.send(new DeleteObjectCommand({ Bucket: rt.config.s3.bucket, Key })).catch(() => undefined);
};
