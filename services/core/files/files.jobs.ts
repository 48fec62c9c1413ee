// `file.postprocess`, run by the worker: hash the stored bytes, find the real
// type from the first bytes (whatever the client claimed), read an image's
// dimensions and make its thumbnail, then mark the file ready, once.
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { fileTypeFromBuffer } from 'file-type';
import sharp from 'sharp';
import { recordEvents } from '../../../shared/events.js';
import type { JobHandler } from '../../../shared/jobs.js';
import type { Runtime } from '../../../shared/runtime.js';
import { presentFile, type FileRow } from './files.presenter.js';
import { thumbnailKey } from './files.service.js';
import * as store from './files.store.js';

/** Decompression-bomb limit: images over 50 megapixels are not decoded. */
export const MAX_IMAGE_PIXELS = 50_000_000;
const THUMBNAIL_EDGE = 360;
const SNIFF_BYTES = 4100; // what file-type reads to decide

/** Types sharp decodes here; anything else is stored as-is without a thumbnail. */
const DECODABLE_IMAGES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/tiff', 'image/avif']);

type Outcome = Pick<FileRow, 'status' | 'failure_reason' | 'content_type' | 'sha256' | 'width' | 'height' | 'thumbnail_key'>;

export const postprocessFile: JobHandler<'file.postprocess'> = async (rt, { fileId }, job) => {
  const file = await store.findFile(rt.db, fileId);
  if (!file || file.status !== 'processing') return; // gone, or done by an earlier attempt
  let outcome: Outcome;
  try {
    outcome = await inspect(rt, file);
  } catch (err) {
    if (!job.lastAttempt) throw err; // storage hiccup: BullMQ retries with backoff
    rt.log.error({ err: (err as Error).message, file_id: fileId }, 'file processing failed for good');
    outcome = { ...unchanged(file), status: 'failed', failure_reason: 'the file could not be processed' };
  }
  await finish(rt, file, outcome);
};

/** Applies the outcome if the file is still processing, with its event, in one transaction. */
async function finish(rt: Runtime, file: FileRow, outcome: Outcome) {
  await rt.db.transaction(async (trx) => {
    const updated = await store.finishProcessing(trx, file.id, outcome);
    if (!updated || !updated.uploader_id) return;
    await recordEvents(rt, trx, [
      {
        type: 'file.ready',
        to: { scope: 'users', workspace_id: updated.workspace_id, user_ids: [updated.uploader_id] },
        data: { file: presentFile(updated) },
      },
    ]);
  });
}

const unchanged = (file: FileRow): Outcome => ({
  status: file.status,
  failure_reason: null,
  content_type: file.content_type,
  sha256: null,
  width: null,
  height: null,
  thumbnail_key: null,
});

async function inspect(rt: Runtime, file: FileRow): Promise<Outcome> {
  const { sha256, head } = await hashAndHead(await readObject(rt, file.storage_key));
  const contentType = await sniffType(head, file.content_type);
  const base: Outcome = { ...unchanged(file), status: 'ready', sha256, content_type: contentType };
  if (!DECODABLE_IMAGES.has(contentType)) return base;

  try {
    const image = await readImage(rt, file);
    return { ...base, ...image };
  } catch (err) {
    if (err instanceof ImageRefused) return { ...base, status: 'failed', failure_reason: err.message };
    throw err;
  }
}

async function readObject(rt: Runtime, key: string): Promise<Readable> {
  const res = await rt.s3.send(new GetObjectCommand({ Bucket: rt.config.s3.bucket, Key: key }));
  return res.Body as Readable;
}

/** One pass over the stored bytes: SHA-256 of all, and the first bytes for sniffing. */
async function hashAndHead(body: Readable): Promise<{ sha256: string; head: Buffer }> {
  const hash = createHash('sha256');
  const headChunks: Buffer[] = [];
  let headBytes = 0;
  for await (const chunk of body) {
    const buf = chunk as Buffer;
    hash.update(buf);
    if (headBytes < SNIFF_BYTES) {
      headChunks.push(buf.subarray(0, SNIFF_BYTES - headBytes));
      headBytes += Math.min(buf.length, SNIFF_BYTES - headBytes);
    }
  }
  return { sha256: hash.digest('hex'), head: Buffer.concat(headChunks) };
}

const TEXT_LIKE = /^(text\/[a-z0-9.+-]+|application\/(json|xml|javascript|ecmascript|x-ndjson|yaml|x-yaml|toml|x-sh|csv|sql|graphql)|[a-z]+\/[a-z0-9.-]+\+(json|xml))$/;

/**
 * The type from the bytes. Formats with a signature are named by it; text has
 * none, so the claimed type is kept only when it is a text type and the bytes
 * look like text. Everything else is application/octet-stream.
 */
export async function sniffType(head: Buffer, claimed: string): Promise<string> {
  const found = await fileTypeFromBuffer(head);
  if (found) return found.mime;
  const looksLikeText = !head.includes(0);
  return looksLikeText && TEXT_LIKE.test(claimed) ? claimed : 'application/octet-stream';
}

class ImageRefused extends Error {}

const tooManyPixels = () => new ImageRefused(`the image has more than ${MAX_IMAGE_PIXELS / 1_000_000} megapixels`);

/** sharp's own errors, as a reason people can read. */
const refusal = (err: unknown) =>
  /pixel limit/i.test((err as Error)?.message ?? '') ? tooManyPixels() : new ImageRefused('the image could not be decoded');

async function readImage(rt: Runtime, file: FileRow): Promise<Pick<Outcome, 'width' | 'height' | 'thumbnail_key'>> {
  const body = await readObject(rt, file.storage_key);
  const input = sharp({ limitInputPixels: MAX_IMAGE_PIXELS, failOn: 'error', sequentialRead: true });
  const metadataP = input.clone().metadata();
  const thumbnailP = input
    .clone()
    .rotate() // honour EXIF orientation
    .resize(THUMBNAIL_EDGE, THUMBNAIL_EDGE, { fit: 'inside', withoutEnlargement: true })
    .webp({ quality: 80 })
    .toBuffer();
  body.on('error', (err) => input.destroy(err));
  body.pipe(input);

  const [metadata, thumbnail] = await Promise.allSettled([metadataP, thumbnailP]);
  if (metadata.status === 'rejected') throw refusal(metadata.reason);
  const { width, height } = metadata.value;
  if (!width || !height) throw new ImageRefused('the image has no dimensions');
  if (width * height > MAX_IMAGE_PIXELS) throw tooManyPixels();
  if (thumbnail.status === 'rejected') throw refusal(thumbnail.reason);
  const key = thumbnailKey(file.workspace_id, file.id);
  await rt.s3.send(
    new PutObjectCommand({ Bucket: rt.config.s3.bucket, Key: key, Body: thumbnail.value, ContentType: 'image/webp' }),
  );
  return { width, height, thumbnail_key: key };
}

/** `file.remove_objects`: a removed file's stored objects (deleting one already gone succeeds: a retry is a no-op). */
export const removeFileObjects: JobHandler<'file.remove_objects'> = async (rt, { keys }) => {
  for (const Key of keys) await rt.s3.send(new DeleteObjectCommand({ Bucket: rt.config.s3.bucket, Key }));
};
