// The HTTP load generator, a separate process driven over IPC: autocannon
// runs (posts, history reads, webhook posts), uploads, and posts at a fixed
// rate for the streaming scenarios.
import { createReadStream, statSync } from 'node:fs';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { serve } from '../lib/rpc.js';
import { Histogram } from '../lib/stats.js';

const now = () => performance.timeOrigin + performance.now();

export interface CannonArgs {
  url: string;
  connections: number;
  durationS: number;
  /** post: JSON {content}; hook: JSON {text}; history: GET with a random cursor in [minSeq, maxSeq]. */
  kind: 'post' | 'hook' | 'history';
  path: string;
  headers?: Record<string, string>;
  seqRange?: [number, number];
}

export interface CannonResult {
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  durationS: number;
  rps: number;
  p50: number;
  p99: number;
  statuses: Record<string, number>;
}

async function cannon(a: CannonArgs): Promise<CannonResult> {
  const salt = randomBytes(4).toString('hex');
  let n = 0;
  const headers = { ...a.headers, ...(a.kind === 'history' ? {} : { 'content-type': 'application/json' }) };
  const request: autocannon.Request =
    a.kind === 'history'
      ? {
          method: 'GET',
          path: a.path,
          setupRequest: (req) => {
            const [lo, hi] = a.seqRange!;
            const seq = lo + Math.floor(Math.random() * (hi - lo));
            return { ...req, path: `${a.path}&cursor=${Buffer.from(`s${seq}`).toString('base64url')}` };
          },
        }
      : {
          method: 'POST',
          path: a.path,
          setupRequest: (req) => {
            n++;
            const text = `bench ${salt} message ${n}: the quick brown fox jumps over the lazy dog`;
            return { ...req, body: JSON.stringify(a.kind === 'hook' ? { text } : { content: text }) };
          },
        };
  const result = await autocannon({
    url: a.url,
    connections: a.connections,
    duration: a.durationS,
    headers,
    requests: [request],
  });
  const statuses: Record<string, number> = {};
  for (const [code, s] of Object.entries((result as unknown as { statusCodeStats?: Record<string, { count: number }> }).statusCodeStats ?? {})) {
    statuses[code] = s.count;
  }
  const ok = result['2xx'];
  return {
    ok,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    durationS: result.duration,
    rps: ok / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    statuses,
  };
}

export interface UploadArgs {
  mode: 'axid' | 'floor';
  file: string;
  url?: string;
  key?: string;
  s3?: { endpoint: string; bucket: string };
}

async function upload(a: UploadArgs): Promise<{ ms: number; status: number; bytes: number; body?: string }> {
  const bytes = statSync(a.file).size;
  const started = now();
  if (a.mode === 'floor') {
    const client = new S3Client({
      endpoint: a.s3!.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
    await new Upload({
      client,
      params: { Bucket: a.s3!.bucket, Key: `bench/${randomBytes(8).toString('hex')}`, Body: createReadStream(a.file), ContentType: 'application/octet-stream' },
    }).done();
    client.destroy();
    return { ms: now() - started, status: 200, bytes };
  }
  const boundary = `----axidbench${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="bench.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tailBuf = Buffer.from(`\r\n--${boundary}--\r\n`);
  return new Promise((resolve, reject) => {
    const req = http.request(`${a.url}/api/v1/files`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${a.key}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': String(head.length + bytes + tailBuf.length),
      },
    });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ ms: now() - started, status: res.statusCode ?? 0, bytes, body: body.slice(0, 300) }));
    });
    req.on('error', reject);
    req.write(head);
    const stream = createReadStream(a.file);
    stream.on('error', reject);
    stream.on('end', () => req.end(tailBuf));
    stream.pipe(req, { end: false });
  });
}

export interface PosterArgs {
  url: string;
  /** Paths posted to in turn. */
  paths: string[];
  key?: string;
  rate: number;
  durationMs: number;
  /** Whether to send metadata {type, data: {t}} (else t travels only in the content). */
  metadata: boolean;
  /** Pad each body with a `pad` field to this many bytes (Nchan relays the body as the frame's data). */
  padTo?: number;
}

export interface PosterResult {
  sent: number;
  ok: number;
  failed: number;
  statuses: Record<string, number>;
  firstSendAt: number;
  lastSendAt: number;
  /** Successful posts per path index. */
  okPerPath: number[];
  /** Send to response of the successful posts, ms. */
  p50: number;
  p99: number;
}

/** Posts at a fixed rate; each body carries its send time `t` (ms, high resolution, epoch based). */
async function poster(a: PosterArgs): Promise<PosterResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const statuses: Record<string, number> = {};
  const okPerPath = a.paths.map(() => 0);
  let sent = 0;
  let ok = 0;
  let failed = 0;
  let inFlight = 0;
  let firstSendAt = 0;
  let lastSendAt = 0;
  const start = now();
  const total = Math.round((a.rate * a.durationMs) / 1000);
  const latency = new Histogram();
  const one = (i: number) => {
    const t = now();
    if (!firstSendAt) firstSendAt = t;
    lastSendAt = t;
    let body = JSON.stringify(a.metadata ? { content: `bench t=${t}`, metadata: { type: 'bench', data: { t } } } : { content: `bench t=${t}` });
    if (a.padTo && body.length + 10 < a.padTo) body = `${body.slice(0, -1)},"pad":"${'x'.repeat(a.padTo - body.length - 9)}"}`;
    inFlight++;
    const req = http.request(`${a.url}${a.paths[i % a.paths.length]}`, {
      method: 'POST',
      agent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...(a.key ? { authorization: `Bearer ${a.key}` } : {}) },
    });
    req.on('response', (res) => {
      res.resume();
      const code = res.statusCode ?? 0;
      statuses[code] = (statuses[code] ?? 0) + 1;
      if (code >= 200 && code < 300) {
        ok++;
        latency.record(now() - t);
        okPerPath[i % a.paths.length]!++;
      } else failed++;
      res.on('end', () => inFlight--);
    });
    req.on('error', () => {
      failed++;
      inFlight--;
    });
    req.end(body);
  };
  while (sent < total) {
    const due = Math.min(total, Math.floor(((now() - start) * a.rate) / 1000) + 1);
    while (sent < due) one(sent++);
    await new Promise((r) => setTimeout(r, 2));
  }
  const deadline = now() + 10_000;
  while (inFlight > 0 && now() < deadline) await new Promise((r) => setTimeout(r, 5));
  agent.destroy();
  return { sent, ok, failed, statuses, firstSendAt, lastSendAt, okPerPath, p50: latency.percentile(50), p99: latency.percentile(99) };
}

serve({ cannon, upload, poster });
