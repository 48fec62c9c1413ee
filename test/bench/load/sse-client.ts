// SSE load: many raw http.request streams in one process, minimal parsing.
// Each `message.created` frame's send time `t` gives a delivery latency.
import { execSync } from 'node:child_process';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { serve } from '../lib/rpc.js';
import { Histogram } from '../lib/stats.js';

const now = () => performance.timeOrigin + performance.now();

export interface StreamSpec {
  path: string;
  key?: string;
  /** When the stream counts as open: its `init` frame (Axid, floor), or a 200 answer (Nchan, which sends no init). */
  ready?: 'init' | 'response';
}

const hist = new Histogram();
/** From the message's created_at (PostgreSQL's now() in the inserting transaction) to receipt: the event pipeline without the POST's queueing. */
const fromInsert = new Histogram();
let deliveries = 0;
let firstAt = 0;
let lastAt = 0;
/** Length of the last `data:` payload of a message.created frame (Nchan's posts are padded to Axid's). */
let dataBytes = 0;
const open = new Set<http.ClientRequest>();

const T_JSON = /"t":\s*([0-9.]+)/;
const T_TEXT = /t=([0-9.]+)/;
const CREATED_AT = /"created_at":"([^"]+)"/;

function onFrame(frame: string, at: number, inited: () => void) {
  if (frame.startsWith(':')) return;
  if (frame.startsWith('event: init') || frame.startsWith('event:init')) return inited();
  if (!frame.includes('message.created')) return;
  const m = T_JSON.exec(frame) ?? T_TEXT.exec(frame);
  if (!m) return;
  const data = frame.indexOf('data: ');
  if (data !== -1) dataBytes = frame.length - data - 6;
  deliveries++;
  if (!firstAt) firstAt = at;
  lastAt = at;
  hist.record(at - Number(m[1]));
  const created = CREATED_AT.exec(frame);
  if (created) fromInsert.record(at - Date.parse(created[1]!));
}

function connect(url: string, spec: StreamSpec, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const done = (err?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) {
        req.destroy();
        open.delete(req);
        reject(err);
      } else resolve();
    };
    const req = http.request(`${url}${spec.path}`, {
      agent: false,
      headers: { accept: 'text/event-stream', ...(spec.key ? { authorization: `Bearer ${spec.key}` } : {}) },
    });
    const timer = setTimeout(() => done(new Error('no init frame in time')), timeoutMs);
    open.add(req);
    req.on('response', (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        return done(new Error(`status ${res.statusCode}`));
      }
      if (spec.ready === 'response') done();
      let rest = '';
      res.on('data', (chunk: Buffer) => {
        const at = now();
        const s = rest ? rest + chunk.toString('latin1') : chunk.toString('latin1');
        let start = 0;
        let i: number;
        while ((i = s.indexOf('\n\n', start)) !== -1) {
          onFrame(s.slice(start, i), at, () => done());
          start = i + 2;
        }
        rest = start < s.length ? s.slice(start) : '';
      });
      res.on('error', () => undefined);
      res.on('close', () => open.delete(req));
    });
    req.on('error', (err) => {
      open.delete(req);
      done(err);
    });
    req.end();
  });
}

async function openAll(a: { url: string; specs: StreamSpec[]; concurrency: number; timeoutMs: number }) {
  const started = now();
  let next = 0;
  let opened = 0;
  const errors: Record<string, number> = {};
  const worker = async () => {
    while (next < a.specs.length) {
      const spec = a.specs[next++]!;
      try {
        await connect(a.url, spec, a.timeoutMs);
        opened++;
      } catch (err) {
        const k = (err as Error).message;
        errors[k] = (errors[k] ?? 0) + 1;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(a.concurrency, a.specs.length) }, worker));
  return { opened, failed: a.specs.length - opened, errors, ms: now() - started };
}

serve({
  open: openAll,
  reset() {
    hist.reset();
    fromInsert.reset();
    deliveries = 0;
    firstAt = 0;
    lastAt = 0;
    return null;
  },
  count: () => deliveries,
  fdLimit: () => Number(execSync('ulimit -n', { shell: '/bin/sh' }).toString().trim()),
  stats: () => ({ deliveries, firstAt, lastAt, dataBytes, hist: hist.toSparse(), fromInsert: fromInsert.toSparse() }),
  close() {
    for (const req of open) req.destroy();
    open.clear();
    return null;
  },
});
