// Where an exported file's bytes come from, and their way into storage:
// the export's own `files/<id>/…` folder (what export:slack writes), a
// `--files-from` folder holding the files by Slack file id, or the file's
// `url_private_download`, fetched with retries through the address checks of
// the one outbound fetcher (shared/http/outbound-fetch.ts: its URL rules and
// its checked, bounded DNS; public addresses only unless
// EVENT_SUBSCRIPTION_ALLOW_PRIVATE, the connection pinned to the address
// checked). Unlike the fetcher's buffered answers the bytes are streamed to
// S3, never held whole, and Slack's own redirects (to its file hosts) are
// followed, each checked again.
import { createReadStream, promises as fs } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import path from 'node:path';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { type OutboundFetcher, urlProblem } from '../../../shared/http/outbound-fetch.js';
import { MAX_FILE_BYTES } from '../files/files.upload.js';
import type { SlackFile } from './slack-export.schemas.js';
import type { SlackZip } from './slack-export.zip.js';

export interface FileSources {
  zip: SlackZip;
  filesFrom: string | null;
  allowPrivate: boolean;
  /** The one outbound fetcher: its address checks and DNS bound. */
  outbound: OutboundFetcher;
  /** Attempts at a URL (network errors and 5xx are tried again). */
  attempts?: number;
}

export interface OpenedFile {
  stream: Readable;
  /** Where it came from, for the report. */
  origin: 'export' | 'folder' | 'url';
}

/** The file could not be had: the reason goes into the message and the report. */
export class MissingFile extends Error {}

const FETCH_TIMEOUT_MS = 30_000;
const MAX_REDIRECTS = 3;

/** The first source that has the file, opened; MissingFile naming why none did. */
export async function openSlackFile(f: SlackFile, src: FileSources): Promise<OpenedFile> {
  if (f.mode === 'tombstone' || f.mode === 'hidden_by_limit') throw new MissingFile(f.mode === 'tombstone' ? 'deleted in Slack' : 'hidden by the Slack plan’s limit');
  const inZip = [...src.zip.entries.keys()].find((name) => name === `files/${f.id}` || name.startsWith(`files/${f.id}/`));
  if (inZip) return { stream: await src.zip.stream(inZip), origin: 'export' };
  if (src.filesFrom) {
    const local = await findInFolder(src.filesFrom, f.id);
    if (local) return { stream: createReadStream(local), origin: 'folder' };
  }
  const url = f.url_private_download ?? f.url_private;
  if (!url) throw new MissingFile(src.filesFrom ? 'not in the --files-from folder, and the export has no download URL' : 'the export has no download URL (use --files-from)');
  return { stream: await fetchWithRetries(src.outbound, url, src.allowPrivate, src.attempts ?? 3), origin: 'url' };
}

async function findInFolder(dir: string, id: string): Promise<string | null> {
  // Slack file ids are [A-Z0-9]; anything else could walk out of the folder.
  if (!/^[A-Za-z0-9_-]+$/.test(id)) return null;
  const direct = path.join(dir, id);
  const stat = await fs.stat(direct).catch(() => null);
  if (stat?.isFile()) return direct;
  if (stat?.isDirectory()) {
    const inside = (await fs.readdir(direct, { withFileTypes: true })).find((e) => e.isFile());
    if (inside) return path.join(direct, inside.name);
  }
  return null;
}

async function fetchWithRetries(outbound: OutboundFetcher, url: string, allowPrivate: boolean, attempts: number): Promise<Readable> {
  let last: Error = new MissingFile('not fetched');
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      return await fetchOnce(outbound, url, allowPrivate, MAX_REDIRECTS);
    } catch (err) {
      last = err as Error;
      if (err instanceof MissingFile && !(err as MissingFile & { retry?: boolean }).retry) break;
      if (attempt < attempts) await new Promise((r) => setTimeout(r, 250 * 2 ** attempt));
    }
  }
  throw last instanceof MissingFile ? last : new MissingFile(`download failed: ${last.message}`);
}

function retryable(message: string) {
  return Object.assign(new MissingFile(message), { retry: true });
}

async function fetchOnce(outbound: OutboundFetcher, raw: string, allowPrivate: boolean, redirectsLeft: number): Promise<Readable> {
  const problem = urlProblem(raw, allowPrivate);
  if (problem) throw new MissingFile(`its download URL ${problem}`);
  const url = new URL(raw);
  let checked: { address: string; family: number };
  try {
    checked = await outbound.resolveChecked(url.hostname, allowPrivate, FETCH_TIMEOUT_MS);
  } catch (err) {
    throw new MissingFile(`download refused: ${(err as Error).message}`);
  }
  const lookup: LookupFunction = (_host, options, cb) => {
    if (options?.all) (cb as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [checked]);
    else cb(null, checked.address, checked.family);
  };
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<Readable>((resolve, reject) => {
    const req = client.get(url, { agent: false, lookup, timeout: FETCH_TIMEOUT_MS, headers: { 'user-agent': 'Axid-Slack-import' } }, (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400 && res.headers.location && redirectsLeft > 0) {
        res.resume();
        resolve(fetchOnce(outbound, new URL(res.headers.location, url).href, allowPrivate, redirectsLeft - 1));
        return;
      }
      if (status !== 200) {
        res.resume();
        reject(status >= 500 || status === 429 ? retryable(`download answered ${status}`) : new MissingFile(`download answered ${status}`));
        return;
      }
      resolve(res);
    });
    req.on('timeout', () => req.destroy(retryable('download timed out')));
    req.on('error', (err) => reject(err instanceof MissingFile ? err : retryable(`download failed: ${err.message}`)));
  });
}

class TooLarge extends Error {}

class ByteCounter extends Transform {
  bytes = 0;
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback) {
    this.bytes += chunk.length;
    if (this.bytes > MAX_FILE_BYTES) return done(new TooLarge());
    done(null, chunk);
  }
}

/** Streams the bytes to `bucket/key`; returns their size. MissingFile when the source fails midway or is too large. */
export async function storeStream(s3: S3Client, bucket: string, key: string, stream: Readable, contentType: string): Promise<number> {
  const counter = new ByteCounter();
  stream.on('error', (err) => counter.destroy(err));
  const upload = new Upload({ client: s3, params: { Bucket: bucket, Key: key, Body: stream.pipe(counter), ContentType: contentType }, queueSize: 2, partSize: 5 * 1024 * 1024 });
  try {
    await upload.done();
  } catch (err) {
    if (err instanceof TooLarge || counter.destroyed) {
      throw new MissingFile(err instanceof TooLarge ? `larger than ${MAX_FILE_BYTES} bytes` : `could not be read: ${(err as Error).message}`);
    }
    throw err;
  }
  return counter.bytes;
}

/** For the report: whether a source would have the file, without reading it (dry run). */
export async function hasSource(f: SlackFile, src: FileSources): Promise<string | null> {
  if (f.mode === 'tombstone' || f.mode === 'hidden_by_limit') return f.mode === 'tombstone' ? 'deleted in Slack' : 'hidden by the Slack plan’s limit';
  if ([...src.zip.entries.keys()].some((name) => name === `files/${f.id}` || name.startsWith(`files/${f.id}/`))) return null;
  if (src.filesFrom && (await findInFolder(src.filesFrom, f.id))) return null;
  const url = f.url_private_download ?? f.url_private;
  if (!url) return src.filesFrom ? 'not in the --files-from folder, and the export has no download URL' : 'the export has no download URL (use --files-from)';
  return urlProblem(url, src.allowPrivate) ? `its download URL ${urlProblem(url, src.allowPrivate)}` : null;
}
