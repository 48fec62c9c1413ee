// Reads POST /emoji's multipart body: the field `name` and the part `image`,
// at most MAX_EMOJI_BYTES, in memory (small by rule). Past the limit the rest
// is not read (busboy truncates) and the answer is 413.
import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import { AppError } from '../../../shared/errors.js';
import { MAX_EMOJI_BYTES } from './emoji.schemas.js';

export interface EmojiUpload {
  name: string | undefined;
  image: Buffer;
}

const tooLarge = () => new AppError('file_too_large', `image: larger than the limit of ${MAX_EMOJI_BYTES} bytes (256 KB)`);

export function readEmojiUpload(req: IncomingMessage): Promise<EmojiUpload> {
  const type = (req.headers['content-type'] ?? '').toLowerCase();
  if (!type.startsWith('multipart/form-data')) {
    return Promise.reject(new AppError('unsupported_media_type', 'body: send multipart/form-data with the fields "name" and "image"'));
  }
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > MAX_EMOJI_BYTES + 64 * 1024) {
    req.resume();
    return Promise.reject(tooLarge());
  }
  return new Promise<EmojiUpload>((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { fields: 5, fieldSize: 1024, files: 1, fileSize: MAX_EMOJI_BYTES, parts: 10, headerPairs: 40 } });
    } catch {
      return reject(new AppError('validation_error', 'body: malformed multipart/form-data (missing boundary?)'));
    }
    let name: string | undefined;
    let image: Buffer | undefined;
    let failure: AppError | undefined;
    parser.on('field', (field, value) => {
      if (field === 'name') name = value;
    });
    parser.on('file', (field, stream) => {
      if (field !== 'image' || image) {
        stream.resume();
        return;
      }
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('limit', () => (failure = tooLarge()));
      stream.on('end', () => (image = Buffer.concat(chunks)));
    });
    parser.on('close', () => {
      if (failure) return reject(failure);
      if (!image) return reject(new AppError('validation_error', 'image: is required (a multipart part named "image")'));
      resolve({ name, image });
    });
    parser.on('error', (err: Error) => reject(new AppError('validation_error', `body: malformed multipart/form-data (${err.message})`)));
    req.once('close', () => {
      if (!req.complete) reject(new AppError('validation_error', 'body: the upload was interrupted'));
    });
    req.pipe(parser);
  });
}
