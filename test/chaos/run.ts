// `npm run chaos`: a fault harness. It runs a split deployment (two API
// processes, a gateway, a worker) on its own PostgreSQL, redis-server and S3
// server (spare loopback ports; never the machine's shared servers), keeps a
// steady load on it with a client that records every id, injects one fault
// after another (stopped and paused, SIGSTOP, dependencies among them), and
// prints per fault: posts accepted, silent gaps, duplicate deliveries, 5xx
// other than 503, the slowest answer, posts that answered 503 and were found
// committed later, jobs not finished within 60 s, and stale reads of one's own
// writes (after each accepted post the writer reads the channel's latest page
// through the other API process: reads go to a streaming replica of the
// database when it has replayed the post, DATABASE_READ_URL).
//
// A silent gap is an accepted post that a stream never delivered although it
// was connected before the post was sent and stayed connected for GRACE_MS
// after it was accepted (a stream that ends tells the client to refetch).
// Bounded: everything is stopped after MAX_RUN_MS whatever happens.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { Redis } from 'ioredis';
import { freePort } from '../../shared/embedded.js';
import { busKeys, channelShard } from '../../shared/event-bus.js';
import { PrivatePostgres } from '../support/private-postgres.js';
import { LocalRedisCluster } from '../support/redis-cluster.js';
import { startProcess, type RunningProcess } from '../support/stack-process.js';

const PHASE_MS = 8_000;
const OUTAGE_MS = 5_000;
/**
 * Longer than the bounds on a hung dependency (DB_STATEMENT_TIMEOUT_MS + 1 s,
 * REDIS_COMMAND_TIMEOUT_MS), so they show. CHAOS_PAUSE_MS changes it: an answer
 * time that grows with the pause is a wait without a bound.
 */
const PAUSE_MS = Number(process.env.CHAOS_PAUSE_MS ?? 10_000);
/** CHAOS_PHASES: run only the faults whose names contain one of these (comma-separated, e.g. `pause`); all by default. */
const ONLY = (process.env.CHAOS_PHASES ?? '').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
const selected = (name: string) => ONLY.length === 0 || ONLY.some((part) => name.toLowerCase().includes(part));
const GRACE_MS = 10_000;
const JOB_DEADLINE_MS = 60_000;
const REQUEST_TIMEOUT_MS = 15_000;
const MAX_RUN_MS = 8 * 60_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (...a: unknown[]) => process.stderr.write(`[chaos ${new Date().toISOString().slice(11, 19)}] ${a.join(' ')}\n`);

// ---------- private servers ----------

/** redis-server with an append-only file, so a stop and start keeps the data (the wipe is a fault of its own). */
class ChaosRedis {
  child: ChildProcess | null = null;
  readonly dir = mkdtempSync(path.join(os.tmpdir(), 'axid-chaos-redis-'));
  constructor(readonly port: number) {}
  get url() {
    return `redis://127.0.0.1:${this.port}`;
  }
  async up() {
    this.child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes', '--dir', this.dir],
      { stdio: 'ignore' },
    );
    for (let i = 0; i < 200; i++) {
      const probe = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      probe.on('error', () => undefined);
      const ok = await probe
        .connect()
        .then(() => probe.ping())
        .then(
          (r) => r === 'PONG',
          () => false,
        );
      probe.disconnect();
      if (ok) return;
      await sleep(50);
    }
    throw new Error('redis-server did not start');
  }
  async down() {
    this.resume();
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
  /** SIGSTOP: the connection stays open and nothing answers. */
  pause() {
    this.child?.kill('SIGSTOP');
  }
  resume() {
    this.child?.kill('SIGCONT');
  }
  async flushAll() {
    const r = new Redis(this.url);
    try {
      await r.flushall();
    } finally {
      r.disconnect();
    }
  }
  async stop() {
    await this.down();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

// ---------- the client's records ----------

interface Phase {
  name: string;
  accepted: number;
  refused503: number;
  other5xx: number;
  timeouts: number;
  connectionErrors: number;
  jobs: number;
  /** Reads by the posting key, right after a post, whose page lacked that post. */
  staleReads: number;
  ownReads: number;
  /** The slowest answer of the phase's requests (ms), timeouts included. */
  slowestMs: number;
  /** The slowest 503 (ms), and 503s without Retry-After. */
  slowest503Ms: number;
  noRetryAfter: number;
  /** Posts retried after a 503 (the writer sends the same content again until it is accepted). */
  retries: number;
}

/** Answers worth a look: slower than 2 s, or a 5xx other than 503 (printed after the table). */
const notable: string[] = [];

interface Post {
  id: string;
  phase: number;
  sentAt: number;
  acceptedAt: number;
}

interface Job {
  kind: 'file' | 'render';
  key: string; // file id, or the attachment title of a compatible post
  phase: number;
  acceptedAt: number;
  finishedAt?: number;
}

interface Connection {
  openedAt: number;
  endedAt?: number;
  delivered: Map<string, number>;
}

/** message.created entries seen on the event bus (one shard: `{axid:bus:0}`, shared/event-bus.ts): entry id → message id (read before the wipe and at the end). */
const streamEntries = new Map<string, string>();

async function readEventStream(url: string) {
  const r = new Redis(url);
  try {
    let start = '-';
    for (;;) {
      const batch = (await r.xrange('{axid:bus:0}', start, '+', 'COUNT', 1000)) as [string, string[]][];
      for (const [id, fields] of batch) {
        const event = JSON.parse(fields[1]!) as { type: string; data: { message?: { id: string } } };
        if (event.type === 'message.created' && event.data.message) streamEntries.set(id, event.data.message.id);
      }
      if (batch.length < 1000) return;
      start = `(${batch[batch.length - 1]![0]}`;
    }
  } finally {
    r.disconnect();
  }
}

const phases: Phase[] = [];
const posts: Post[] = [];
/** Posts answered 503: none may be found committed at the end. */
const refusedPosts: Array<{ content: string; phase: number }> = [];
/** Contents accepted (201) after one or more 503s: each must be found exactly once. */
const retriedPosts: Array<{ content: string; phase: number }> = [];
const jobs: Job[] = [];
const connections: Connection[] = [];
let phase = 0;
const newPhase = (name: string) => {
  phases.push({ name, accepted: 0, refused503: 0, other5xx: 0, timeouts: 0, connectionErrors: 0, jobs: 0, staleReads: 0, ownReads: 0, slowestMs: 0, slowest503Ms: 0, noRetryAfter: 0, retries: 0 });
  phase = phases.length - 1;
  log(`phase: ${name}`);
};

// ---------- the stream reader (reconnects when a stream ends) ----------

/** Hands each frame of an SSE answer to `onFrame` (eventsource-parser, the `eventsource` package's own parser). */
function readFrames(res: http.IncomingMessage, onFrame: (frame: EventSourceMessage) => void) {
  const parser = createParser({ onEvent: onFrame });
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => parser.feed(chunk));
}

function openStream(url: string, key: string): Promise<Connection | null> {
  return new Promise((resolve) => {
    const req = http.get(`${url}/api/v1/stream`, { headers: { authorization: `Bearer ${key}` }, agent: false }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        return resolve(null);
      }
      const conn: Connection = { openedAt: 0, delivered: new Map() };
      readFrames(res, ({ event, data }) => {
        if (event === 'init') {
          conn.openedAt = Date.now();
          connections.push(conn);
          resolve(conn);
        } else if (event === 'message.created') {
          const id = (JSON.parse(data) as { message: { id: string } }).message.id;
          conn.delivered.set(id, (conn.delivered.get(id) ?? 0) + 1);
        }
      });
      const end = () => {
        conn.endedAt ??= Date.now();
        resolve(null);
      };
      res.on('end', end);
      res.on('close', end);
      res.on('error', end);
    });
    req.on('error', () => resolve(null));
  });
}

// ---------- the deployment ----------

interface Deployment {
  env: Record<string, string>;
  apis: RunningProcess[];
  gateway: RunningProcess;
  worker: RunningProcess;
}

const started = new Set<RunningProcess>();
/** Every process started, for their error lines at the end. */
const everyProcess: Array<{ roles: string; p: RunningProcess }> = [];
async function role(env: Record<string, string>, roles: string): Promise<RunningProcess> {
  const p = await startProcess({ ...env, ROLES: roles });
  started.add(p);
  everyProcess.push({ roles, p });
  p.child.once('exit', () => started.delete(p));
  return p;
}

async function kill(p: RunningProcess, signal: NodeJS.Signals) {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  const exited = new Promise((r) => p.child.once('exit', r));
  p.child.kill(signal);
  await exited;
}

// ---------- the load ----------

async function request(url: string, method: string, pathname: string, key: string | null, body?: unknown) {
  const started = Date.now();
  // Counted in the phase it was sent in, as the table counts it.
  const p = phases[phase];
  try {
    const res = await fetch(`${url}${pathname}`, {
      method,
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await res.text();
    const ms = Date.now() - started;
    if (p && res.status === 503) {
      p.slowest503Ms = Math.max(p.slowest503Ms, ms);
      if (!res.headers.get('retry-after')) p.noRetryAfter++;
    }
    if (p && (ms > 2_000 || (res.status >= 500 && res.status !== 503))) {
      notable.push(`${p.name}: ${method} ${pathname.replace(/[A-Za-z0-9_-]{20,}/g, '…')} ${res.status} in ${(ms / 1000).toFixed(1)} s ${text.slice(0, 160)}`);
    }
    return { status: res.status, json: text.startsWith('{') ? JSON.parse(text) : null, started, ms };
  } catch (err) {
    return { status: (err as Error).name === 'TimeoutError' ? -1 : 0, json: null, started, ms: Date.now() - started };
  }
}

/** Counts a failed request: -1 no answer in time, 0 connection refused or reset. */
function count(p: Phase, status: number) {
  if (status === 503) p.refused503++;
  else if (status === -1) p.timeouts++;
  else if (status === 0) p.connectionErrors++;
  else if (status >= 500) p.other5xx++;
}

async function main() {
  const hardStop = setTimeout(() => {
    log('run took too long: stopping everything');
    void cleanup().finally(() => process.exit(2));
  }, MAX_RUN_MS);
  hardStop.unref();

  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'axid-chaos-'));
  const pgServer = await PrivatePostgres.start();
  const pgReplica = await PrivatePostgres.replicaOf(pgServer);
  const redis = new ChaosRedis(await freePort());
  await redis.up();
  // The S3 server every process shares (as the embedded default does for one process).
  const s3rverModule: string = 's3rver';
  const { default: S3rver } = (await import(s3rverModule)) as {
    default: new (o: object) => { run(): Promise<unknown>; close(): Promise<void> };
  };
  const s3 = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: path.join(dataDir, 's3'), configureBuckets: [{ name: 'axid-files' }] });
  const s3Address = (await s3.run()) as { port: number };
  const key = randomBytes(32).toString('base64url');
  const env = {
    DATABASE_URL: pgServer.url('axid'),
    DATABASE_READ_URL: pgReplica.url('axid'),
    REDIS_URL: redis.url,
    S3_ENDPOINT: `http://127.0.0.1:${s3Address.port}`,
    S3_ACCESS_KEY_ID: 'S3RVER', // s3rver's fixed credentials
    S3_SECRET_ACCESS_KEY: 'S3RVER',
    DATA_DIR: dataDir,
    BOOTSTRAP_ADMIN_KEY: key,
    RATE_LIMIT_POINTS: '1000000',
    JOB_RECONCILE_AFTER: '20',
    LOG_LEVEL: 'warn',
  };

  let stopLoad = false; // the writers
  let stopReaders = false; // the stream and job readers
  let dep: Deployment | null = null;
  const loops: Promise<void>[] = [];

  cleanup = async () => {
    stopLoad = true;
    stopReaders = true;
    await Promise.allSettled([...started].map((p) => kill(p, 'SIGKILL')));
    await redis.stop();
    await localCluster?.stop();
    await pgReplica.stop();
    await pgServer.stop();
    await s3.close().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  };

  try {
    if (ONLY_CLUSTER) {
      await clusterFailover(env, pgServer.url('axid_cluster'));
      return;
    }
    log('starting the deployment');
    const first = await role(env, 'api');
    const [second, gateway, worker] = await Promise.all([role(env, 'api'), role(env, 'gateway'), role(env, 'worker')]);
    dep = { env, apis: [first, second], gateway, worker };
    const d = dep;
    const db = new pg.Pool({ connectionString: env.DATABASE_URL, max: 2 });
    db.on('error', () => undefined);

    const channel = (await request(first.url, 'POST', '/api/v1/channels', key, { name: `chaos-${Date.now()}` })).json.data.id as string;
    const hook = (await request(first.url, 'POST', '/api/v1/webhooks/incoming', key, { channel_id: channel, name: 'chaos' })).json.data.id as string;
    newPhase('steady (no fault)');

    // The stream: one connection at a time, reopened when it ends.
    loops.push(
      (async () => {
        while (!stopReaders) {
          const conn = await openStream(d.gateway.url, key);
          if (!conn) {
            await sleep(200);
            continue;
          }
          while (!stopReaders && conn.endedAt === undefined) await sleep(50);
        }
      })(),
    );
    await sleep(500);

    // Posts: two writers, alternating API processes.
    let n = 0;
    for (let w = 0; w < 2; w++) {
      loops.push(
        (async () => {
          let refused: string | null = null;
          while (!stopLoad) {
            const api = d.apis[n++ % d.apis.length]!;
            const sentAt = Date.now();
            const p = phases[phase]!;
            // After a 503 the same content again, as a client that retries does: it must be stored once.
            const retrying = refused !== null;
            const content: string = refused ?? `chaos ${n}`;
            if (retrying) p.retries++;
            const res = await request(api.url, 'POST', `/api/v1/channels/${channel}/messages`, key, { content });
            p.slowestMs = Math.max(p.slowestMs, res.ms);
            refused = res.status === 503 ? content : null;
            if (res.status === 201) {
              if (retrying) retriedPosts.push({ content, phase });
              p.accepted++;
              posts.push({ id: res.json.data.id, phase, sentAt, acceptedAt: Date.now() });
              // Read-your-writes, through the other API process (the position is shared through Redis).
              const reader = d.apis[n % d.apis.length]!;
              const seen = await request(reader.url, 'GET', `/api/v1/channels/${channel}/messages?limit=50`, key);
              if (seen.status === 200) {
                p.ownReads++;
                if (!(seen.json.data as { id: string }[]).some((m) => m.id === res.json.data.id)) p.staleReads++;
              } else count(p, seen.status);
            } else count(p, res.status);
            if (res.status === 503 && !retrying) refusedPosts.push({ content, phase });
            await sleep(40);
          }
        })(),
      );
    }

    // Jobs: an upload and a compatible webhook post with an attachment, about every 700 ms.
    loops.push(
      (async () => {
        let i = 0;
        while (!stopLoad) {
          const api = d.apis[i++ % d.apis.length]!;
          const p = phases[phase]!;
          const upStarted = Date.now();
          const form = new FormData();
          form.append('file', new Blob([randomBytes(2048)], { type: 'application/octet-stream' }), `chaos-${i}.bin`);
          const up = await fetch(`${api.url}/api/v1/files`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}` },
            body: form,
            signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
          })
            .then(async (r) => ({ status: r.status, retryAfter: r.headers.get('retry-after'), json: (await r.json().catch(() => null)) as { data?: { id: string }; error?: { code: string } } | null }))
            .catch((err: Error) => ({ status: err.name === 'TimeoutError' ? -1 : 0, retryAfter: null, json: null }));
          const upMs = Date.now() - upStarted;
          p.slowestMs = Math.max(p.slowestMs, upMs);
          if (up.status === 503) {
            p.slowest503Ms = Math.max(p.slowest503Ms, upMs);
            if (!up.retryAfter) p.noRetryAfter++;
          }
          if (upMs > 2_000 || (up.status >= 500 && up.status !== 503)) notable.push(`${p.name}: POST /api/v1/files ${up.status} in ${(upMs / 1000).toFixed(1)} s ${up.json?.error?.code ?? ''}`);
          if (up.status === 201) {
            p.jobs++;
            jobs.push({ kind: 'file', key: up.json!.data!.id, phase, acceptedAt: Date.now() });
          } else count(p, up.status);
          const title = `chaos-render-${i}`;
          const posted = await request(api.url, 'POST', `/hooks/compat/${hook}`, null, { attachments: [{ fallback: title, title }] });
          p.slowestMs = Math.max(p.slowestMs, posted.ms);
          if (posted.status === 200) {
            p.jobs++;
            jobs.push({ kind: 'render', key: title, phase, acceptedAt: Date.now() });
          } else count(p, posted.status);
          await sleep(700);
        }
      })(),
    );

    // Job completion, read from Postgres.
    loops.push(
      (async () => {
        while (!stopReaders) {
          await sleep(500);
          const open = jobs.filter((j) => j.finishedAt === undefined);
          if (open.length === 0) continue;
          try {
            const files = open.filter((j) => j.kind === 'file').map((j) => j.key);
            const done = new Set<string>();
            if (files.length) {
              const r = await db.query<{ id: string }>(`SELECT id FROM files WHERE id = ANY($1::uuid[]) AND status <> 'processing'`, [files]);
              for (const row of r.rows) done.add(row.id);
            }
            const r2 = await db.query<{ content: string }>(
              `SELECT content FROM messages WHERE webhook_id = $1 AND content_json IS NOT NULL AND created_at > now() - interval '10 minutes'`,
              [hook],
            );
            for (const row of r2.rows) {
              const m = /chaos-render-\d+/.exec(row.content);
              if (m) done.add(m[0]);
            }
            const now = Date.now();
            for (const j of open) if (done.has(j.key)) j.finishedAt = now;
          } catch {
            /* Postgres away: read again later */
          }
        }
      })(),
    );

    await sleep(PHASE_MS);

    const fault = async (name: string, run: () => Promise<void>) => {
      if (!selected(name)) return;
      newPhase(name);
      await run();
      await sleep(PHASE_MS);
    };

    await fault('SIGKILL an API process', async () => {
      await kill(d.apis[0]!, 'SIGKILL');
      d.apis.splice(0, 1);
      d.apis.push(await role(env, 'api'));
    });
    await fault(`stop Redis for ${OUTAGE_MS / 1000} s`, async () => {
      await redis.down();
      await sleep(OUTAGE_MS);
      await redis.up();
    });
    await fault('wipe Redis (FLUSHALL)', async () => {
      await readEventStream(redis.url);
      await redis.flushAll();
    });
    await fault(`stop PostgreSQL for ${OUTAGE_MS / 1000} s`, async () => {
      await pgServer.down();
      await sleep(OUTAGE_MS);
      await pgServer.up();
    });
    await fault('replica stopped under load', async () => {
      await pgReplica.down();
      await sleep(OUTAGE_MS);
      await pgReplica.up();
    });
    await fault(`pause Redis (SIGSTOP) for ${PAUSE_MS / 1000} s`, async () => {
      redis.pause();
      await sleep(PAUSE_MS);
      redis.resume();
    });
    await fault(`pause PostgreSQL (SIGSTOP) for ${PAUSE_MS / 1000} s`, async () => {
      await pgServer.pause();
      await sleep(PAUSE_MS);
      await pgServer.resume();
    });
    await fault('SIGTERM the gateway', async () => {
      await kill(d.gateway, 'SIGTERM');
      d.gateway = await role(env, 'gateway');
    });
    await fault('roll both API processes', async () => {
      for (let i = 0; i < 2; i++) {
        const fresh = await role(env, 'api');
        const old = d.apis.shift()!;
        d.apis.push(fresh);
        await kill(old, 'SIGTERM');
      }
    });
    await fault('SIGKILL the worker mid-job', async () => {
      // Mid-job: right after an upload was accepted.
      const before = jobs.length;
      while (jobs.length === before) await sleep(20);
      await kill(d.worker, 'SIGKILL');
      d.worker = await role(env, 'worker');
    });

    stopLoad = true;
    log('load stopped; waiting for the last deliveries and jobs');
    const lastAccepted = Math.max(...posts.map((p) => p.acceptedAt), ...jobs.map((j) => j.acceptedAt));
    while (Date.now() < lastAccepted + JOB_DEADLINE_MS && jobs.some((j) => j.finishedAt === undefined)) await sleep(500);
    while (Date.now() < lastAccepted + GRACE_MS) await sleep(200);
    stopReaders = true;
    await Promise.allSettled(loops);
    // A post that answered 503 must not have committed after its answer: a
    // content refused and never accepted on a retry is not stored, and one
    // accepted on a retry is stored once.
    const found = await db.query<{ content: string; n: number }>('SELECT content, count(*)::int AS n FROM messages WHERE channel_id = $1 AND content = ANY($2) GROUP BY content', [
      channel,
      refusedPosts.map((r) => r.content),
    ]);
    const stored = new Map(found.rows.map((r) => [r.content, r.n]));
    const retried = new Set(retriedPosts.map((r) => r.content));
    for (const r of refusedPosts) {
      const n = stored.get(r.content) ?? 0;
      if (n > (retried.has(r.content) ? 1 : 0)) lateCommits[r.phase] = (lateCommits[r.phase] ?? 0) + 1;
    }
    await db.end();
    await readEventStream(redis.url);

    const unfinished = jobs.filter((j) => j.finishedAt === undefined);
    if (unfinished.length) log(`unfinished jobs: ${unfinished.filter((j) => j.kind === 'file').length} files, ${unfinished.filter((j) => j.kind === 'render').length} renders`);
    printTable();
    const errors = everyProcess.flatMap(({ roles, p }) => p.output().split('\n').filter((l) => /"level":(50|60)/.test(l)).map((l) => `${roles}: ${l.slice(0, 300)}`));
    process.stdout.write(`\nerror lines logged by the deployment: ${errors.length}\n${errors.slice(0, 20).join('\n')}\n`);

    // The cluster case runs a deployment of its own: the one above stops first.
    await Promise.allSettled([...started].map((p) => kill(p, 'SIGTERM')));
    if (selected('Redis Cluster')) await clusterFailover(env, pgServer.url('axid_cluster'));
  } finally {
    await cleanup();
    clearTimeout(hardStop);
  }
}

let cleanup: () => Promise<void> = async () => undefined;

// ---------- a Redis Cluster's primary killed under load ----------

/** `npm run chaos -- cluster` runs only this case. */
const ONLY_CLUSTER = process.argv.slice(2).includes('cluster');
const CLUSTER_SHARDS = 4;
const CLUSTER_POSTS_PER_S = 100;
const CLUSTER_LOAD_MS = 12_000;
const CLUSTER_KILL_AT_MS = 3_000;
let localCluster: LocalRedisCluster | null = null;

/**
 * A client that keeps one stream open and, when it ends, resumes it with
 * Last-Event-ID (level 3) on the next gateway: what a browser's EventSource does.
 */
class ResumingStream {
  readonly delivered = new Map<string, number>();
  /** When each message.created first arrived. */
  readonly arrivedAt = new Map<string, number>();
  resumes = 0;
  /** Reconnects answered `"resumed": false` (a gap the client would have to fill from history). */
  refused = 0;
  private lastId: string | null = null;
  private req: http.ClientRequest | null = null;
  private stopped = false;

  constructor(
    private readonly gateways: () => string[],
    private readonly key: string,
  ) {}

  /** Resolves once the first stream is open. */
  start(): Promise<void> {
    return new Promise((resolve) => {
      void (async () => {
        for (let g = 0; !this.stopped; g++) {
          await this.once(this.gateways()[g % this.gateways().length]!, resolve);
          if (!this.stopped) await sleep(100);
        }
      })();
    });
  }

  stop() {
    this.stopped = true;
    this.req?.destroy();
  }

  private once(url: string, opened: () => void): Promise<void> {
    return new Promise((done) => {
      const headers: Record<string, string> = { authorization: `Bearer ${this.key}`, ...(this.lastId ? { 'last-event-id': this.lastId } : {}) };
      const req = http.get(`${url}/api/v1/stream`, { headers, agent: false }, (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          return done();
        }
        readFrames(res, ({ event, data, id }) => {
          if (event === 'init') {
            if (this.lastId) {
              this.resumes++;
              if (!(JSON.parse(data) as { resumed?: boolean }).resumed) this.refused++;
            }
            opened();
          } else if (event === 'message.created') {
            const m = (JSON.parse(data) as { message: { id: string } }).message.id;
            this.delivered.set(m, (this.delivered.get(m) ?? 0) + 1);
            if (!this.arrivedAt.has(m)) this.arrivedAt.set(m, Date.now());
          }
          if (id) this.lastId = id;
        });
        res.on('close', () => done());
        res.on('error', () => done());
      });
      this.req = req;
      req.on('error', () => done());
    });
  }
}

/**
 * A deployment on a local six-node Redis Cluster (three primaries, a replica
 * each, cluster-node-timeout 2 s) with EVENT_SHARDS=4 at level 3: an API
 * process with the worker, a second API process and two gateway processes.
 * Posts go to one channel at 100 a second for 12 s, alternating API
 * processes; after 3 s the primary that holds the channel's shard is
 * SIGKILLed. Two clients, one per gateway, keep a stream open and resume it
 * with Last-Event-ID when it ends. A silent gap is an accepted post a client
 * never got (live or replayed) within GRACE_MS of the last acceptance.
 */
async function clusterFailover(base: Record<string, string>, databaseUrl: string) {
  log('cluster case: starting a local Redis Cluster');
  const cluster = await LocalRedisCluster.start();
  localCluster = cluster;
  const { DATABASE_READ_URL: _read, REDIS_URL: _url, ...rest } = base;
  const env: Record<string, string> = {
    ...rest,
    DATABASE_URL: databaseUrl,
    REDIS_CLUSTER_NODES: cluster.seeds,
    EVENT_SHARDS: String(CLUSTER_SHARDS),
    FEATURE_LEVEL: '3',
    REDIS_KEY_PREFIX: 'axid:',
  };
  const key = env.BOOTSTRAP_ADMIN_KEY!;
  const first = await role(env, 'api,worker');
  const [second, gw1, gw2] = await Promise.all([role(env, 'api'), role(env, 'gateway'), role(env, 'gateway')]);
  const apis = [first, second];

  const channel = (await request(first.url, 'POST', '/api/v1/channels', key, { name: `chaos-cluster-${Date.now()}` })).json.data.id as string;
  const member = (await request(first.url, 'POST', '/api/v1/users', key, { name: `chaos-member-${Date.now()}` })).json.data;
  await request(first.url, 'POST', `/api/v1/channels/${channel}/members`, key, { user_id: member.id });
  const shardKey = busKeys(env.REDIS_KEY_PREFIX!, CLUSTER_SHARDS).shards[channelShard(channel, CLUSTER_SHARDS)]!.events;
  const victim = await cluster.primaryOf(shardKey);

  const clients = [new ResumingStream(() => [gw1.url, gw2.url], key), new ResumingStream(() => [gw2.url, gw1.url], member.api_key as string)];
  await Promise.all(clients.map((c) => c.start()));

  newPhase(`Redis Cluster: SIGKILL the primary of a shard at ${CLUSTER_POSTS_PER_S} posts/s`);
  const p = phases[phase]!;
  const accepted: Array<{ id: string; acceptedAt: number }> = [];
  const inFlight: Promise<void>[] = [];
  const loadStart = Date.now();
  let killedAt = 0;
  let failoverMs = -1;
  let failover: Promise<void> = Promise.resolve();
  /** When the posts that were not accepted were sent, ms after the kill. */
  const unanswered: number[] = [];
  /** When the answers slower than 2 s were asked for, ms after the kill (0: before it). */
  const slow: number[] = [];
  const interval = 1000 / CLUSTER_POSTS_PER_S;
  for (let i = 0; Date.now() - loadStart < CLUSTER_LOAD_MS; ) {
    if (!killedAt && Date.now() - loadStart >= CLUSTER_KILL_AT_MS) {
      killedAt = Date.now();
      log(`SIGKILL the primary on port ${victim}`);
      failover = cluster.kill(victim).then(async () => {
        // Failed over once another node serves the shard's slot and the cluster says ok.
        await cluster.healthy(60_000);
        while ((await cluster.primaryOf(shardKey)) === victim) await sleep(100);
        failoverMs = Date.now() - killedAt;
      });
    }
    // Every `interval` ms is a post's turn: posts late to start (a busy event loop) go out together.
    for (; i * interval <= Date.now() - loadStart; i++) {
      const api = apis[i % apis.length]!;
      inFlight.push(
        request(api.url, 'POST', `/api/v1/channels/${channel}/messages`, key, { content: `cluster ${i}` }).then((res) => {
          p.slowestMs = Math.max(p.slowestMs, res.ms);
          if (res.status === 201) {
            p.accepted++;
            accepted.push({ id: res.json.data.id, acceptedAt: Date.now() });
          } else count(p, res.status);
          if (res.status !== 201 && killedAt) unanswered.push(res.started - killedAt);
          if (res.ms > 2000) slow.push(res.started - (killedAt || res.started));
        }),
      );
    }
    await sleep(interval / 2);
  }
  const sent = inFlight.length;
  await Promise.all(inFlight);
  await failover;
  log('cluster case: load stopped; waiting for the last deliveries');
  const lastAccepted = Math.max(...accepted.map((a) => a.acceptedAt));
  const allDelivered = () => clients.every((c) => accepted.every((a) => c.delivered.has(a.id)));
  while (Date.now() < lastAccepted + GRACE_MS && !allDelivered()) await sleep(100);
  for (const c of clients) c.stop();

  let gaps = 0;
  let duplicates = 0;
  let slowestDeliveryMs = 0;
  for (const c of clients) {
    for (const a of accepted) {
      const got = c.delivered.get(a.id) ?? 0;
      if (got === 0) gaps++;
      if (got > 1) duplicates += got - 1;
      const at = c.arrivedAt.get(a.id);
      if (at !== undefined) slowestDeliveryMs = Math.max(slowestDeliveryMs, at - a.acceptedAt);
    }
  }
  const header =
    '| fault | posts sent | posts accepted | silent gaps | duplicates | 5xx other than 503 | 503 answers | slowest answer (s) | no answer in 15 s | stream resumptions (refused) | failover (s) | slowest post-to-receipt (s) |';
  const line = `| ${p.name} | ${sent} | ${p.accepted} | ${gaps} | ${duplicates} | ${p.other5xx} | ${p.refused503} | ${(p.slowestMs / 1000).toFixed(1)} | ${p.timeouts} | ${clients.reduce((n, c) => n + c.resumes, 0)} (${clients.reduce((n, c) => n + c.refused, 0)}) | ${(failoverMs / 1000).toFixed(1)} | ${(slowestDeliveryMs / 1000).toFixed(1)} |`;
  process.stdout.write(`\n${header}\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n${line}\n\nclients: ${clients.length} (one per gateway), each counted against every accepted post${
      unanswered.length ? `; posts not accepted were sent ${Math.min(...unanswered)} to ${Math.max(...unanswered)} ms after the kill` : ''
    }${slow.length ? `; ${slow.length} answers took over 2 s, asked ${Math.min(...slow)} to ${Math.max(...slow)} ms after the kill` : ''}\n`);
  await Promise.allSettled([...started].map((proc) => kill(proc, 'SIGTERM')));
}
/** Per phase: posts answered 503 and found committed at the end. */
const lateCommits: number[] = [];

function printTable() {
  const end = Date.now();
  const rows = phases.map((p, i) => {
    const mine = posts.filter((x) => x.phase === i);
    let gaps = 0;
    let duplicates = 0;
    for (const post of mine) {
      for (const c of connections) {
        const got = c.delivered.get(post.id) ?? 0;
        if (got > 1) duplicates += got - 1;
        const coveredFrom = c.openedAt <= post.sentAt;
        const stayed = (c.endedAt ?? end) >= post.acceptedAt + GRACE_MS;
        if (coveredFrom && stayed && got === 0) gaps++;
      }
    }
    const late = jobs.filter((j) => j.phase === i && (j.finishedAt === undefined || j.finishedAt - j.acceptedAt > JOB_DEADLINE_MS)).length;
    return { p, gaps, duplicates, late };
  });
  const header =
    '| fault | posts accepted | silent gaps | duplicates | 5xx other than 503 | 503 answers | 503 without Retry-After | slowest 503 (s) | posts retried after a 503 | 503 then committed | slowest answer (s) | no answer in 15 s | connection refused | jobs recorded | jobs not finished in 60 s | own reads | stale own reads |';
  const lines = [header, '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|'];
  for (const [i, { p, gaps, duplicates, late }] of rows.entries()) {
    lines.push(
      `| ${p.name} | ${p.accepted} | ${gaps} | ${duplicates} | ${p.other5xx} | ${p.refused503} | ${p.noRetryAfter} | ${(p.slowest503Ms / 1000).toFixed(1)} | ${p.retries} | ${lateCommits[i] ?? 0} | ${(p.slowestMs / 1000).toFixed(1)} | ${p.timeouts} | ${p.connectionErrors} | ${p.jobs} | ${late} | ${p.ownReads} | ${p.staleReads} |`,
    );
  }
  // Where duplicates come from: a message on the Redis stream twice (the relay) or once (the gateway).
  const entriesPerMessage = new Map<string, number>();
  for (const m of streamEntries.values()) entriesPerMessage.set(m, (entriesPerMessage.get(m) ?? 0) + 1);
  const onStreamTwice = [...entriesPerMessage.values()].filter((n) => n > 1).length;
  process.stdout.write(
    `\n${lines.join('\n')}\n\nanswers slower than 2 s or 5xx other than 503:\n${notable.join('\n') || '(none)'}\n\nstream connections: ${connections.length}; messages on the Redis event stream more than once: ${onStreamTwice} (of ${entriesPerMessage.size} read)\n`,
  );
}

process.once('SIGINT', () => {
  void cleanup().finally(() => process.exit(130));
});

main().then(
  () => process.exit(0),
  (err) => {
    log('failed:', (err as Error).stack ?? err);
    void cleanup().finally(() => process.exit(1));
  },
);
