// Streams the `file` part of a multipart request to S3 as it arrives: never
// whole in memory, never on local disk. Bytes are counted on the way; past
// the limit the upload is aborted and nothing stays in storage.
import type { IncomingMessage } from 'node:http';
import { Transform, type TransformCallback } from 'node:stream';
import busboy from 'busboy';
import { DeleteObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { AppError } from '../../../shared/errors.js';

/** 100 MB, 104,857,600 bytes: the upload limit (README.md, "Files"). */
export const MAX_FILE_BYTES = 104_857_600;

// After refusing an upload the rest of the body is read and thrown away for
// a while, as nginx's lingering close does: a client still sending (Node's
// fetch, browsers) then reads our answer instead of a broken pipe. Bounded in
// time and bytes, then the connection is cut.
const LINGER_MS = 30_000;
const LINGER_BYTES = 128 * 1024 * 1024;

// Multipart parts of 5 MiB (the S3 minimum), two in flight: memory stays
// around 15 MiB per upload whatever the file size.
const PART_SIZE = 5 * 1024 * 1024;
const QUEUE_SIZE = 2;

export interface ReceivedFile {
  name: string;
  size: number;
  claimedType: string;
}

export const fileTooLarge = () =>
  new AppError('file_too_large', `file: larger than the limit of ${MAX_FILE_BYTES} bytes (100 MB)`);

class TooLarge extends Error {}

/** Counts bytes as they pass and fails the stream once the limit is passed. */
class ByteCounter extends Transform {
  bytes = 0;
  constructor(private readonly limit: number) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback) {
    this.bytes += chunk.length;
    if (this.bytes > this.limit) return done(new TooLarge());
    done(null, chunk);
  }
}

/** A file name as shown to people: no path, no control characters, bounded. */
export function cleanFileName(raw: string | undefined): string {
  const base = (raw ?? '').split(/[\\/]/).pop() ?? '';
  // eslint-disable-next-line no-control-regex
  // Controls, and bidi controls (Unicode's Bidi_Control: RLO, LRI, ...), which
  // make `exe.txt` of `\u202Etxt.exe` in whatever shows the name.
  const cleaned = base.replace(/[\u0000-\u001f\u007f]|\p{Bidi_Control}/gu, '').trim().slice(0, 255);
  return cleaned || 'file';
}

const MIME = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;
export const cleanMimeType = (raw: string | undefined) => {
  const type = (raw ?? '').toLowerCase().split(';')[0]!.trim();
  return MIME.test(type) ? type : 'application/octet-stream';
};

/**
 * Reads the request's multipart body and streams the field `file` to
 * `bucket/key`. Resolves once the object is stored; rejects with 413
 * file_too_large (after removing whatever was written), 400 or 415.
 */
export function receiveUpload(
  req: IncomingMessage,
  o: { s3: S3Client; bucket: string; key: string; limit?: number },
): Promise<ReceivedFile> {
  const limit = o.limit ?? MAX_FILE_BYTES;
  const type = (req.headers['content-type'] ?? '').toLowerCase();
  if (!type.startsWith('multipart/form-data')) {
    return Promise.reject(new AppError('unsupported_media_type', 'body: send multipart/form-data with the file in the field "file"'));
  }
  // Refuse at once what cannot fit (the multipart envelope of one file is small).
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit + 1024 * 1024) {
    discardRest(req);
    return Promise.reject(fileTooLarge());
  }

  return new Promise<ReceivedFile>((resolve, reject) => {
    let settled = false;
    let storing: Promise<ReceivedFile> | null = null;
    let stopStoring: ((err: Error) => void) | null = null;
    const finish = (err: unknown, value?: ReceivedFile) => {
      if (settled) return;
      settled = true;
      if (!err) return resolve(value!);
      req.unpipe(parser);
      discardRest(req);
      // A part still being stored fails too, so its multipart upload is
      // aborted; answer once that cleanup is done.
      stopStoring?.(err as Error);
      const cleanedUp = storing ? storing.then(() => undefined, () => undefined) : Promise.resolve();
      void cleanedUp.then(() => reject(err));
    };

    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        limits: { fields: 20, fieldSize: 64 * 1024, parts: 40, headerPairs: 40 },
        defParamCharset: 'utf8',
      });
    } catch {
      return reject(new AppError('validation_error', 'body: malformed multipart/form-data (missing boundary?)'));
    }

    parser.on('file', (field, stream, info) => {
      if (field !== 'file' || storing) {
        stream.resume(); // only the first `file` part is kept
        return;
      }
      storing = store(stream, info.filename, info.mimeType);
      storing.catch((err) => finish(err));
    });
    parser.on('close', () => {
      if (!storing) return finish(new AppError('validation_error', 'file: is required (a multipart part named "file")'));
      storing.then((value) => finish(null, value), finish);
    });
    parser.on('error', (err: Error) => {
      // A broken body: the stored part (if any) is cleaned up by its own failure.
      finish(new AppError('validation_error', `body: malformed multipart/form-data (${err.message})`));
    });
    // Cut before the whole body came, also before this handler ran (its
    // 'aborted' then came and went: the parser, piped from it, waited for ever).
    const cut = () => {
      if (!req.complete) finish(new AppError('validation_error', 'body: the upload was interrupted'));
    };
    if (req.destroyed) return cut();
    req.once('close', cut);
    req.pipe(parser);

    async function store(part: NodeJS.ReadableStream, filename: string | undefined, mimeType: string | undefined) {
      const counter = new ByteCounter(limit);
      stopStoring = (err) => counter.destroy(err);
      part.on('error', (err) => counter.destroy(err));
      part.pipe(counter);
      const upload = new Upload({
        client: o.s3,
        params: { Bucket: o.bucket, Key: o.key, Body: counter, ContentType: cleanMimeType(mimeType) },
        partSize: PART_SIZE,
        queueSize: QUEUE_SIZE,
        leavePartsOnError: false, // a failed multipart upload is aborted (AbortMultipartUpload)
      });
      try {
        await upload.done();
      } catch (err) {
        // The failed stream made lib-storage abort the multipart upload; a
        // small single-request upload may still have landed: remove it.
        await upload.abort();
        await o.s3.send(new DeleteObjectCommand({ Bucket: o.bucket, Key: o.key })).catch(() => undefined);
        if (err instanceof TooLarge || counter.bytes > limit) throw fileTooLarge();
        throw err;
      }
      return { name: cleanFileName(filename), size: counter.bytes, claimedType: cleanMimeType(mimeType) };
    }
  });
}

/**
 * Reads and discards what the client still sends, at most LINGER_BYTES for at
 * most LINGER_MS, then cuts the connection; a body that ends in time leaves
 * the connection usable.
 */
function discardRest(req: IncomingMessage) {
  if (req.complete) return;
  let discarded = 0;
  const cut = () => req.socket.destroy();
  const timer = setTimeout(cut, LINGER_MS).unref();
  req.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > LINGER_BYTES) cut();
  });
  req.once('close', () => clearTimeout(timer));
  req.resume();
}
