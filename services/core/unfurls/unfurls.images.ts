// Preview images live in the workspace's storage, named by the hash of their
// bytes (`unfurls/<workspace_id>/<sha256>`), and are served by the API
// (`GET /unfurl-images/{workspace_id}/{image_id}`), so a browser showing a
// preview loads no third-party address. The type is read from the bytes
// (file-type), never taken from the page's server.
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { fileTypeFromBuffer } from 'file-type';
import { notFound } from '../../../shared/errors.js';
import { isUuid } from '../../../shared/ids.js';
import type { Runtime } from '../../../shared/runtime.js';

/** Image types a preview may have (what browsers show without running anything). */
export const PREVIEW_IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];
/** A preview image larger than this is not kept. */
export const MAX_PREVIEW_IMAGE_BYTES = 2 * 1024 * 1024;

const imageKey = (workspaceId: string, imageId: string) => `unfurls/${workspaceId}/${imageId}`;
const IMAGE_ID = /^[0-9a-f]{64}$/;

/** Stores an image's bytes if they are one of PREVIEW_IMAGE_TYPES; returns its Axid address, or null. */
export async function storePreviewImage(rt: Runtime, workspaceId: string, bytes: Buffer): Promise<string | null> {
  const sniffed = await fileTypeFromBuffer(bytes);
  if (!sniffed || !PREVIEW_IMAGE_TYPES.includes(sniffed.mime)) return null;
  const imageId = createHash('sha256').update(bytes).digest('hex');
  await rt.s3.send(new PutObjectCommand({ Bucket: rt.config.s3.bucket, Key: imageKey(workspaceId, imageId), Body: bytes, ContentType: sniffed.mime }));
  return `${rt.config.publicBaseUrl}/api/v1/unfurl-images/${workspaceId}/${imageId}`;
}

/** The stored bytes of a preview image, with headers that keep them passive. */
export async function readPreviewImage(rt: Runtime, workspaceId: string, imageId: string) {
  if (!isUuid(workspaceId) || !IMAGE_ID.test(imageId)) throw notFound('Image');
  let res;
  try {
    res = await rt.s3.send(new GetObjectCommand({ Bucket: rt.config.s3.bucket, Key: imageKey(workspaceId, imageId) }));
  } catch (err) {
    if ((err as { name?: string }).name === 'NoSuchKey' || (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) throw notFound('Image');
    throw err;
  }
  const type = res.ContentType && PREVIEW_IMAGE_TYPES.includes(res.ContentType) ? res.ContentType : 'application/octet-stream';
  return {
    body: res.Body as Readable,
    headers: {
      'Content-Type': type,
      ...(res.ContentLength !== undefined ? { 'Content-Length': String(res.ContentLength) } : {}),
      'X-Content-Type-Options': 'nosniff',
      'Content-Security-Policy': "sandbox; default-src 'none'",
      // Named by its bytes: an address always holds the same image.
      'Cache-Control': 'public, max-age=31536000, immutable',
    },
  };
}
