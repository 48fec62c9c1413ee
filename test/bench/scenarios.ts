// The seven scenarios. Each measures Axid and its floor in the same run,
// interleaved A B A B over settings.rounds rounds. A scenario whose Axid
// endpoint does not answer yet is reported "not available" with the reason;
// its floor still runs so the floor numbers stay visible.
import { randomBytes, createHash } from 'node:crypto';
import { writeFileSync, openSync, writeSync, closeSync } from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import { freePort } from '../../shared/embedded.js';
import { Rpc } from './lib/rpc.js';
import { cpuMsOf, memoryOf, repoRoot, resetPeak, sleep, spawnNode, waitListening, waitReady, type Proc } from './lib/proc.js';
import { Histogram } from './lib/stats.js';
import type { Scenario } from './lib/report.js';
import { settings } from './settings.js';
import type { CannonArgs, CannonResult, PosterArgs, PosterResult, UploadArgs } from './load/loadgen.js';
import type { StreamSpec } from './load/sse-client.js';
import { findNchan, startNchan, type NchanInstall } from './lib/nchan.js';
import { pgCost, pgMark } from './lib/pgcost.js';
import { heapSampling, inspectFlags, inspectorUrl, sampleHeap } from './lib/heap.js';

/**
 * How the outbox floor keeps its events (servers/floor-post-outbox.ts): as
 * Axid does; BENCH_OUTBOX_FLOOR=row|slim measures another design.
 */
export const OUTBOX_FLOOR_MODE = process.env.BENCH_OUTBOX_FLOOR ?? 'cursor';

export interface Bench {
  id: string;
  databaseUrl: string;
  prefix: string;
  adminKey: string;
  dataDir: string;
  s3: { endpoint: string; bucket: string };
  /** Environment of every Axid process (ROLES and PORT added per process). */
  axidEnv: Record<string, string>;
  api: { proc: Proc; url: string };
  floorPost: { proc: Proc; url: string };
  /** The second floor of scenario 1: the same posts with Axid's event guarantee (servers/floor-post-outbox.ts). */
  floorOutbox: { proc: Proc; url: string };
  floorStreamKey: string;
  db: pg.Client;
  workspaceId: string;
  ownerId: string;
  loadgen: Rpc;
  notes: Set<string>;
  log(msg: string): void;
}

export class Unavailable extends Error {}

// ---------------------------------------------------------------- helpers

export { freePort };

export async function startAxid(b: Bench, name: string, roles: string, o: { raiseFileLimit?: boolean } = {}) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  // BENCH_AXID_ROOT: another checkout's Axid under this harness (A/B of two trees, docs/bench.md).
  const proc = spawnNode(name, path.join(process.env.BENCH_AXID_ROOT ?? repoRoot, 'services/main.ts'), {
    env: { ...b.axidEnv, ROLES: roles, PORT: String(port), PUBLIC_BASE_URL: b.axidEnv.PUBLIC_BASE_URL ?? url },
    raiseFileLimit: o.raiseFileLimit,
    // e.g. --cpu-prof --cpu-prof-dir=<dir>: profiles are written when the bench stops the process
    nodeFlags: [...(process.env.BENCH_AXID_NODE_FLAGS ?? '').split(' ').filter(Boolean), ...inspectFlags()],
  });
  // Migrating a fresh database took over 40 s on a machine with a load of 25.
  await waitReady(proc, `${url}/readyz`, 180_000);
  return { proc, url };
}

export async function startFloor(name: string, file: string, env: Record<string, string>, o: { raiseFileLimit?: boolean } = {}) {
  const proc = spawnNode(name, `test/bench/servers/${file}`, { env, raiseFileLimit: o.raiseFileLimit, nodeFlags: inspectFlags() });
  const port = await waitListening(proc);
  return { proc, url: `http://127.0.0.1:${port}` };
}

interface Answer {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
  text: string;
}

export async function call(url: string, method: string, body?: unknown, key?: string): Promise<Answer> {
  const res = await fetch(url, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, json, text };
}

const describe = (what: string, a: Answer) =>
  `${what} answered ${a.status}${a.json?.error?.code ? ` ${a.json.error.code}` : ''}${a.json?.error?.message ? `: ${a.json.error.message}` : a.json ? '' : `: ${a.text.slice(0, 80)}`}`;

/** A channel through the API; when that endpoint is missing, through SQL so the floors can still run. */
export async function channel(b: Bench, name: string): Promise<string> {
  const res = await call(`${b.api.url}/api/v1/channels`, 'POST', { name }, b.adminKey);
  if (res.status === 201 && res.json?.data?.id) return res.json.data.id as string;
  b.notes.add(`${describe('POST /api/v1/channels', res)}; the bench inserted its channels with SQL`);
  const { rows } = await b.db.query('INSERT INTO channels (workspace_id, name, created_by) VALUES ($1, $2, $3) RETURNING id', [
    b.workspaceId,
    name,
    b.ownerId,
  ]);
  await b.db.query('INSERT INTO channel_members (channel_id, user_id, workspace_id) VALUES ($1, $2, $3)', [rows[0].id, b.ownerId, b.workspaceId]);
  return rows[0].id as string;
}

/** Runs the Axid side (unless unavailable), the floor and (scenarios 3 and 5, when installed) Nchan in turn, round after round. */
async function interleave<T>(
  b: Bench,
  label: string,
  axid: ((round: number) => Promise<T>) | null,
  floor: (round: number) => Promise<T>,
  nchan: ((round: number) => Promise<T>) | null = null,
) {
  const a: T[] = [];
  const f: T[] = [];
  const n: T[] = [];
  for (let r = 1; r <= settings.rounds; r++) {
    if (axid) {
      a.push(await axid(r));
      b.log(`${label}: round ${r} Axid done`);
    }
    f.push(await floor(r));
    b.log(`${label}: round ${r} floor done`);
    if (nchan) {
      n.push(await nchan(r));
      b.log(`${label}: round ${r} Nchan done`);
    }
  }
  return { a, f, n };
}

const cannon = (b: Bench, args: CannonArgs) => b.loadgen.call<CannonResult>('cannon', args, (args.durationS + 30) * 1000);

/**
 * A cannon run and the server's CPU time per answered request: where
 * throughput drifts with what else the machine runs, CPU per request shows
 * the work each side does.
 */
async function measuredCannon(b: Bench, args: CannonArgs, serverPid: number) {
  const mark = await pgMark(b.db);
  const before = cpuMsOf(serverPid);
  const result = await cannon(b, args);
  const cpuUsPerRequest = ((cpuMsOf(serverPid) - before) * 1000) / Math.max(1, result.ok);
  // Events still being relayed when autocannon stops are the run's too.
  await sleep(300);
  const pgUsed = await pgCost(b.db, mark);
  const per = Math.max(1, result.ok);
  return { ...result, cpuUsPerRequest, pgCpuUsPerRequest: (pgUsed.cpuMs * 1000) / per, walBytesPerRequest: pgUsed.walBytes === null ? NaN : pgUsed.walBytes / per };
}

function cannonNotes(side: string, results: CannonResult[]): string[] {
  const bad = results.reduce((n, r) => n + r.non2xx + r.errors + r.timeouts, 0);
  const all = results.reduce((n, r) => n + r.ok + r.non2xx + r.errors + r.timeouts, 0);
  if (bad === 0) return [];
  const statuses: Record<string, number> = {};
  for (const r of results) for (const [k, v] of Object.entries(r.statuses)) if (!k.startsWith('2')) statuses[k] = (statuses[k] ?? 0) + v;
  return [`${side}: ${bad} of ${all} requests failed (statuses ${JSON.stringify(statuses)}); throughput counts 2xx only`];
}

/** Scenario 1 and 7 and 2: autocannon against both sides. */
async function httpScenario(
  b: Bench,
  s: Scenario,
  o: {
    axid: CannonArgs | null;
    floor: CannonArgs;
    floorPid: number;
    throughputTarget: number;
    p99Target?: number;
    /** A second floor (scenario 1: the outbox floor), run third in each round and reported as rows of its own. */
    floor2?: { label: string; args: CannonArgs; pid: number };
    /** Rows of PostgreSQL CPU and WAL per request. */
    /** Rows of PostgreSQL CPU and WAL per request (judged against `target` when given). */
    pgCost?: { target?: number };
  },
) {
  if (settings.warmupSeconds > 0) {
    if (o.axid) await cannon(b, { ...o.axid, durationS: settings.warmupSeconds });
    await cannon(b, { ...o.floor, durationS: settings.warmupSeconds });
    if (o.floor2) await cannon(b, { ...o.floor2.args, durationS: settings.warmupSeconds });
  }
  // Statistics as autovacuum keeps them on a server that runs it (this
  // machine's does not): without them a plan made while the tables were
  // small (the relay's prepared read) stays, and each run costs more than
  // the one before as the tables grow. Taken before each side's run, outside
  // what it measures.
  const analyzed = async <T>(run: () => Promise<T>) => {
    await b.db.query('ANALYZE');
    return run();
  };
  const { a, f, n } = await interleave(
    b,
    s.name,
    o.axid ? () => analyzed(() => measuredCannon(b, o.axid!, b.api.proc.pid)) : null,
    () => analyzed(() => measuredCannon(b, o.floor, o.floorPid)),
    o.floor2 ? () => analyzed(() => measuredCannon(b, o.floor2!.args, o.floor2!.pid)) : null,
  );
  s.metrics.push(
    { metric: 'throughput', unit: 'req/s', axid: a.map((r) => r.rps), floor: f.map((r) => r.rps), target: { kind: 'ratio', op: '>=', value: o.throughputTarget } },
    {
      metric: 'p99 latency',
      unit: 'ms',
      axid: a.map((r) => r.p99),
      floor: f.map((r) => r.p99),
      target: o.p99Target ? { kind: 'ratio', op: '<=', value: o.p99Target } : undefined,
    },
    { metric: 'server CPU per request', unit: 'µs', axid: a.map((r) => r.cpuUsPerRequest), floor: f.map((r) => r.cpuUsPerRequest) },
  );
  if (o.pgCost) {
    const target = o.pgCost.target === undefined ? undefined : { kind: 'ratio' as const, op: '<=' as const, value: o.pgCost.target };
    s.metrics.push(
      { metric: 'PostgreSQL CPU per request', unit: 'µs', axid: a.map((r) => r.pgCpuUsPerRequest), floor: f.map((r) => r.pgCpuUsPerRequest), target },
      { metric: 'WAL per request', unit: 'B', axid: a.map((r) => r.walBytesPerRequest), floor: f.map((r) => r.walBytesPerRequest), target },
    );
  }
  if (o.floor2) {
    // The same Axid rounds against the second floor: the "floor" column of these rows is that floor's.
    const label = o.floor2.label;
    s.metrics.push(
      { metric: `throughput, vs ${label}`, unit: 'req/s', axid: a.map((r) => r.rps), floor: n.map((r) => r.rps) },
      { metric: `p99 latency, vs ${label}`, unit: 'ms', axid: a.map((r) => r.p99), floor: n.map((r) => r.p99) },
      { metric: `server CPU per request, vs ${label}`, unit: 'µs', axid: a.map((r) => r.cpuUsPerRequest), floor: n.map((r) => r.cpuUsPerRequest) },
    );
    if (o.pgCost)
      s.metrics.push(
        { metric: `PostgreSQL CPU per request, vs ${label}`, unit: 'µs', axid: a.map((r) => r.pgCpuUsPerRequest), floor: n.map((r) => r.pgCpuUsPerRequest) },
        { metric: `WAL per request, vs ${label}`, unit: 'B', axid: a.map((r) => r.walBytesPerRequest), floor: n.map((r) => r.walBytesPerRequest) },
      );
    s.notes.push(...cannonNotes(label, n));
  }
  s.notes.push(...cannonNotes('Axid', a), ...cannonNotes('floor', f));
}

// ---------------------------------------------------------------- 1 posts

export async function posts(b: Bench, s: Scenario): Promise<void> {
  const channelId = await channel(b, `bench-posts-${b.id}`);
  const p = `/api/v1/channels/${channelId}/messages`;
  const probe = await call(`${b.api.url}${p}`, 'POST', { content: 'probe' }, b.adminKey);
  const available = probe.status === 201;
  if (!available) s.reason = describe(`POST ${p}`, probe);
  const base = { connections: settings.httpConnections, durationS: settings.httpSeconds, kind: 'post' as const, path: p };
  await httpScenario(b, s, {
    axid: available ? { ...base, url: b.api.url, headers: { authorization: `Bearer ${b.adminKey}` } } : null,
    floor: { ...base, url: b.floorPost.url },
    floorPid: b.floorPost.proc.pid,
    throughputTarget: 0.7,
    p99Target: 1.5,
    floor2: { label: 'outbox floor', args: { ...base, url: b.floorOutbox.url }, pid: b.floorOutbox.proc.pid },
    pgCost: { target: 1.3 },
  });
  if (heapSampling) {
    // One more run per side with the sampling heap profiler on (not in the table: it slows the server).
    const sides = [
      ['Axid', available ? { ...base, url: b.api.url, headers: { authorization: `Bearer ${b.adminKey}` } } : null, b.api.proc],
      ['floor', { ...base, url: b.floorPost.url }, b.floorPost.proc],
      ['outbox floor', { ...base, url: b.floorOutbox.url }, b.floorOutbox.proc],
    ] as const;
    for (const [side, args, proc] of sides) {
      const url = inspectorUrl(proc.output());
      if (!args || !url) continue;
      const { result, sample } = await sampleHeap(url, () => cannon(b, args));
      const per = (n: number) => `${(n / Math.max(1, result.ok) / 1024).toFixed(1)} KB`;
      s.notes.push(`allocation per request, ${side} (sampling heap profile, collected objects included, ${result.ok} requests): ${per(sample.bytes)}; largest: ${sample.top.map((t) => `${t.where} ${per(t.bytes)}`).join(', ')}`);
    }
  }
  s.notes.push(
    `the outbox floor (servers/floor-post-outbox.ts, FLOOR_OUTBOX=${OUTBOX_FLOOR_MODE}) writes each post and its event as Axid does and relays it; its rows ("vs outbox floor") compare the same Axid rounds with it, run third in each round`,
    'PostgreSQL CPU and WAL per request: the backends of the bench database (/proc) and its WAL records (pg_waldump), each side alone on the database during its run',
  );
  if (!available) throw new Unavailable(s.reason);
}

// ---------------------------------------------------------------- 7 webhooks

export async function webhooks(b: Bench, s: Scenario): Promise<void> {
  const channelId = await channel(b, `bench-hooks-${b.id}`);
  const floorPath = `/api/v1/channels/${channelId}/messages`;
  let hookPath: string | null = null;
  const created = await call(`${b.api.url}/api/v1/webhooks/incoming`, 'POST', { channel_id: channelId, name: 'bench' }, b.adminKey);
  if (created.status === 201 && (created.json?.data?.id || created.json?.data?.url)) {
    const id = (created.json.data.id as string | undefined) ?? String(created.json.data.url).split('/').pop();
    hookPath = `/hooks/compat/${id}`;
    const probe = await call(`${b.api.url}${hookPath}`, 'POST', { text: 'probe' });
    if (probe.status !== 200) {
      s.reason = describe(`POST ${hookPath}`, probe);
      hookPath = null;
    }
  } else s.reason = describe('POST /api/v1/webhooks/incoming', created);
  const base = { connections: settings.httpConnections, durationS: settings.httpSeconds };
  await httpScenario(b, s, {
    axid: hookPath ? { ...base, kind: 'hook', path: hookPath, url: b.api.url } : null,
    floor: { ...base, kind: 'post', path: floorPath, url: b.floorPost.url },
    floorPid: b.floorPost.proc.pid,
    throughputTarget: 0.5,
  });
  if (!hookPath) throw new Unavailable(s.reason);
}

// ---------------------------------------------------------------- 2 history

export async function history(b: Bench, s: Scenario): Promise<void> {
  const channelId = await channel(b, `bench-history-${b.id}`);
  const started = Date.now();
  await b.db.query(
    `INSERT INTO messages (workspace_id, channel_id, author_id, content, created_at)
     SELECT $1, $2, $3, 'history message ' || g || ': ' || md5(g::text), now() - make_interval(secs => $4 - g)
     FROM generate_series(1, $4::int) g`,
    [b.workspaceId, channelId, b.ownerId, settings.historyRows],
  );
  await b.db.query('ANALYZE messages');
  const { rows } = await b.db.query('SELECT min(seq)::int AS lo, max(seq)::int AS hi FROM messages WHERE channel_id = $1', [channelId]);
  s.notes.push(`seeded ${settings.historyRows} messages in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const p = `/api/v1/channels/${channelId}/messages?limit=50`;
  const probe = await call(`${b.api.url}${p}`, 'GET', undefined, b.adminKey);
  const available = probe.status === 200 && Array.isArray(probe.json?.data) && probe.json.data.length === 50;
  if (!available) s.reason = probe.status === 200 ? `GET ${p} answered 200 without 50 messages` : describe(`GET ${p}`, probe);
  const floor = await startFloor('floor-history', 'floor-history.ts', { DATABASE_URL: b.databaseUrl });
  try {
    const base = {
      connections: settings.httpConnections,
      durationS: settings.httpSeconds,
      kind: 'history' as const,
      path: p,
      seqRange: [rows[0].lo + 51, rows[0].hi + 1] as [number, number],
    };
    await httpScenario(b, s, {
      axid: available ? { ...base, url: b.api.url, headers: { authorization: `Bearer ${b.adminKey}` } } : null,
      floor: { ...base, url: floor.url },
      floorPid: floor.proc.pid,
      throughputTarget: 0.7,
      // What a page costs Postgres: where the rendering happens is most of the difference.
      pgCost: {},
    });
  } finally {
    await floor.proc.stop();
  }
  if (!available) throw new Unavailable(s.reason);
}

// ---------------------------------------------------------------- 6 upload

export async function upload(b: Bench, s: Scenario): Promise<void> {
  const big = path.join(b.dataDir, 'upload.bin');
  const fd = openSync(big, 'w');
  const chunk = randomBytes(1 << 20);
  for (let done = 0; done < settings.uploadBytes; done += chunk.length) writeSync(fd, chunk, 0, Math.min(chunk.length, settings.uploadBytes - done));
  closeSync(fd);
  const small = path.join(b.dataDir, 'probe.bin');
  writeFileSync(small, randomBytes(1024));
  const up = (args: UploadArgs) => b.loadgen.call<{ ms: number; status: number; bytes: number; body?: string }>('upload', args, 180_000);
  const probe = await up({ mode: 'axid', file: small, url: b.api.url, key: b.adminKey });
  const available = probe.status === 201;
  if (!available) s.reason = `POST /api/v1/files answered ${probe.status}: ${probe.body ?? ''}`.trim();
  const mb = settings.uploadBytes / 1024 / 1024;
  const growth: number[] = [];
  let peakResettable = true;
  const axidSide = async () => {
    const pid = b.api.proc.pid;
    peakResettable = resetPeak(pid) && peakResettable;
    const before = memoryOf(pid);
    const r = await up({ mode: 'axid', file: big, url: b.api.url, key: b.adminKey });
    if (r.status !== 201) throw new Error(`POST /api/v1/files of ${mb} MB answered ${r.status}: ${r.body ?? ''}`);
    growth.push((memoryOf(pid).hwmKb - (peakResettable ? before.rssKb : before.hwmKb)) / 1024);
    return (r.bytes / 1024 / 1024) / (r.ms / 1000);
  };
  const floorSide = async () => {
    const r = await up({ mode: 'floor', file: big, s3: b.s3 });
    return (r.bytes / 1024 / 1024) / (r.ms / 1000);
  };
  const { a, f } = await interleave(b, s.name, available ? axidSide : null, floorSide);
  s.metrics.push({ metric: 'throughput', unit: 'MB/s', axid: a, floor: f, target: { kind: 'ratio', op: '>=', value: 0.8 } });
  if (available) s.metrics.push({ metric: 'API peak RSS growth', unit: 'MB', axid: growth, floor: [], target: { kind: 'abs', op: '<', value: 64 } });
  if (!peakResettable) s.notes.push('could not reset VmHWM (clear_refs): the peak RSS growth is measured against the peak before the upload');
  if (!available) throw new Unavailable(s.reason);
}

// ---------------------------------------------------------------- 3, 4, 5 streams

interface StreamCtx {
  clients: Rpc[];
  procs: Proc[];
  keys: string[];
  userIds: string[];
  metadata: boolean;
  fdLimit: number;
  /** nginx with the Nchan module, when installed: the third side of scenarios 3 and 5. */
  nchan: NchanInstall | null;
  /** Length of the data of Axid's message.created frame (from the probe); Nchan's posts are padded to it. */
  dataBytes: number;
}

export async function sseClients(b: Bench, count: number): Promise<{ clients: Rpc[]; procs: Proc[]; fdLimit: number }> {
  const procs = Array.from({ length: count }, (_, i) => spawnNode(`sse-client-${i + 1}`, 'test/bench/load/sse-client.ts', { ipc: true, raiseFileLimit: true }));
  const clients = procs.map((p) => new Rpc(p.child, p.name));
  await Promise.all(clients.map((c) => c.ready));
  const limit = await clients[0]!.call<number>('fdLimit');
  return { clients, procs, fdLimit: limit };
}

/** Users (with keys) straight into the database: N streams share these keys. */
export async function streamUsers(b: Bench, n: number): Promise<{ keys: string[]; userIds: string[] }> {
  const { rows } = await b.db.query(
    `INSERT INTO users (workspace_id, name) SELECT $1, 'bench-sse-' || g FROM generate_series(1, $2::int) g RETURNING id`,
    [b.workspaceId, n],
  );
  const userIds = rows.map((r) => r.id as string);
  const keys = userIds.map(() => `axidbench_${randomBytes(24).toString('base64url')}`);
  await b.db.query(
    `INSERT INTO api_keys (workspace_id, user_id, name, prefix, key_hash)
     SELECT $1, u, 'bench', left(k, 12), h FROM unnest($2::uuid[], $3::text[], $4::text[]) AS t(u, k, h)`,
    [b.workspaceId, userIds, keys, keys.map((k) => createHash('sha256').update(k).digest('hex'))],
  );
  return { keys, userIds };
}

export async function addMembers(b: Bench, channelId: string, userIds: string[]) {
  await b.db.query(
    `INSERT INTO channel_members (channel_id, user_id, workspace_id) SELECT $1, u, $3 FROM unnest($2::uuid[]) AS t(u) ON CONFLICT DO NOTHING`,
    [channelId, userIds, b.workspaceId],
  );
}

async function startGateway(b: Bench) {
  return startAxid(b, 'axid-gateway', 'gateway', { raiseFileLimit: true });
}

async function startFloorSse(b: Bench) {
  return startFloor('floor-sse', 'floor-sse.ts', { STREAM_KEY: b.floorStreamKey }, { raiseFileLimit: true });
}

/** Whether the gateway delivers a posted message; the reason when it does not. */
async function probeStream(b: Bench, ctx: StreamCtx, channelId: string): Promise<string | null> {
  let gw;
  try {
    gw = await startGateway(b);
  } catch (err) {
    return `the gateway process did not start: ${(err as Error).message.slice(0, 300)}`;
  }
  const client = ctx.clients[0]!;
  try {
    const opened = await client.call<{ opened: number; errors: Record<string, number> }>('open', {
      url: gw.url,
      specs: [{ path: '/api/v1/stream', key: ctx.keys[0] }],
      concurrency: 1,
      timeoutMs: 5000,
    });
    if (opened.opened !== 1) return `GET /api/v1/stream: ${Object.keys(opened.errors).join(', ')}`;
    await client.call('reset');
    const p = `/api/v1/channels/${channelId}/messages`;
    const withMeta = await call(`${b.api.url}${p}`, 'POST', { content: `bench t=${Date.now()}`, metadata: { type: 'bench', data: { t: Date.now() } } }, b.adminKey);
    if (withMeta.status !== 201) {
      const plain = await call(`${b.api.url}${p}`, 'POST', { content: `bench t=${Date.now()}` }, b.adminKey);
      if (plain.status !== 201) return describe(`POST ${p}`, plain);
      ctx.metadata = false;
      b.notes.add(`messages with metadata were refused (${withMeta.status}): the send time travels in the content`);
    }
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline) {
      if ((await client.call<number>('count')) > 0) {
        ctx.dataBytes = (await client.call<{ dataBytes: number }>('stats')).dataBytes || ctx.dataBytes;
        return null;
      }
      await sleep(100);
    }
    return 'a posted message did not reach its channel member on GET /api/v1/stream within 5 s';
  } finally {
    await client.call('close');
    await gw.proc.stop(1000);
  }
}

interface Opened {
  opened: number;
  failed: number;
  ms: number;
}

/** Opens the streams, split evenly across the client processes; waits for every init frame. */
async function openStreams(b: Bench, ctx: StreamCtx, side: string, url: string, specs: StreamSpec[]): Promise<Opened> {
  const parts = ctx.clients.map((_, i) => specs.filter((_, j) => j % ctx.clients.length === i));
  const res = await Promise.all(
    ctx.clients.map((c, i) =>
      c.call<{ opened: number; failed: number; errors: Record<string, number>; ms: number }>(
        'open',
        { url, specs: parts[i], concurrency: 250, timeoutMs: 30_000 },
        // Each stream has its own 30 s; 10,000 of them took over 3 minutes on a machine with a load of 25.
        600_000,
      ),
    ),
  );
  const opened = res.reduce((n, r) => n + r.opened, 0);
  const failed = res.reduce((n, r) => n + r.failed, 0);
  if (failed > 0) b.log(`${side}: ${failed} streams failed to open: ${JSON.stringify(res.map((r) => r.errors))}`);
  if (opened === 0) throw new Error(`${side}: no stream opened: ${JSON.stringify(res.map((r) => r.errors))}`);
  return { opened, failed, ms: Math.max(...res.map((r) => r.ms)) };
}

interface Delivery {
  deliveries: number;
  expected: number;
  deliveriesPerS: number;
  p50: number;
  p99: number;
  /** CPU time of the streaming server (gateway, SSE floor, nginx) per receipt, while posting and delivering. */
  cpuUsPerDelivery: number;
  posts: PosterResult;
}

type Side = 'axid' | 'floor' | 'nchan';

/** Posts at a fixed rate to one side and collects every stream's receipts. */
async function postAndReceive(
  b: Bench,
  ctx: StreamCtx,
  side: Side,
  o: { postPaths: string[]; rate: number; seconds: number; streams: number; serverPid: number; nchanUrl?: string },
): Promise<Delivery> {
  await Promise.all(ctx.clients.map((c) => c.call('reset')));
  const cpuBefore = cpuMsOf(o.serverPid);
  const posts = await b.loadgen.call<PosterResult>(
    'poster',
    {
      // Nchan publishes what it is posted: through its own publisher location, padded to Axid's frame.
      url: side === 'axid' ? b.api.url : side === 'floor' ? b.floorPost.url : o.nchanUrl!,
      paths: o.postPaths,
      key: side === 'axid' ? b.adminKey : undefined,
      rate: o.rate,
      durationMs: o.seconds * 1000,
      metadata: ctx.metadata,
      padTo: side === 'nchan' ? ctx.dataBytes : undefined,
    } satisfies PosterArgs,
    (o.seconds + 30) * 1000,
  );
  // Every stream of a channel should get each of its channel's posts once.
  const expected = Math.round((posts.ok * o.streams) / o.postPaths.length);
  let last = -1;
  let lastChange = Date.now();
  const hardStop = Date.now() + 15_000;
  for (;;) {
    const counts = await Promise.all(ctx.clients.map((c) => c.call<number>('count')));
    const got = counts.reduce((a, x) => a + x, 0);
    if (got >= expected) break;
    if (got !== last) {
      last = got;
      lastChange = Date.now();
    }
    if (Date.now() - lastChange > 2000 || Date.now() > hardStop) break;
    await sleep(100);
  }
  const cpuMs = cpuMsOf(o.serverPid) - cpuBefore;
  const stats = await Promise.all(
    ctx.clients.map((c) => c.call<{ deliveries: number; firstAt: number; lastAt: number; hist: [number, number][] }>('stats')),
  );
  const hist = Histogram.fromSparse(stats.map((x) => x.hist));
  const deliveries = stats.reduce((n, x) => n + x.deliveries, 0);
  const lastAt = Math.max(...stats.map((x) => x.lastAt));
  return {
    deliveries,
    expected,
    deliveriesPerS: deliveries > 0 ? deliveries / ((lastAt - posts.firstSendAt) / 1000) : 0,
    p50: hist.percentile(50),
    p99: hist.percentile(99),
    cpuUsPerDelivery: (cpuMs * 1000) / Math.max(1, deliveries),
    posts,
  };
}

interface FanoutRound extends Delivery, Opened {
  perConnKb: number;
  /** How long the RSS took to settle. */
  settleS: number;
}

/**
 * RSS once it stops falling: V8 returns the garbage of the opening burst only
 * after allocation has been quiet for a while (its memory reducer), in steps 8 to 15 s apart
 * over some 20 s for the gateway (at 10,000 streams: 13.4 KB per stream 7 s
 * after opening, 11.7 at 12 s, 8.6 at 22 s; the floor 10.1 → 9.7, nginx 10.0
 * throughout); later runs saw a step more than 16 s after the one before
 * (settings.ts). Polled each second until no drop above 1% for settleSeconds.
 */
async function settledRssKb(pid: number): Promise<{ kb: number; seconds: number }> {
  const started = Date.now();
  let low = memoryOf(pid).rssKb;
  let lowAt = Date.now();
  while (Date.now() - lowAt < settings.settleSeconds * 1000 && Date.now() - started < settings.settleMaxSeconds * 1000) {
    await sleep(1000);
    const kb = memoryOf(pid).rssKb;
    if (kb < low * 0.99) lowAt = Date.now();
    low = Math.min(low, kb);
  }
  return { kb: low, seconds: (Date.now() - started) / 1000 };
}

/** A fresh server; RSS before and after opening the streams; then the posts. */
async function fanoutRound(b: Bench, ctx: StreamCtx, side: Side, specs: StreamSpec[], postPath: string, round: number): Promise<FanoutRound> {
  const server =
    side === 'axid' ? await startGateway(b) : side === 'floor' ? await startFloorSse(b) : await startNchan(ctx.nchan!, path.join(b.dataDir, `nchan-${round}`));
  try {
    await sleep(1000);
    const baseKb = memoryOf(server.proc.pid).rssKb;
    const opened = await openStreams(b, ctx, side, server.url, specs);
    await sleep(1500);
    const settled = await settledRssKb(server.proc.pid);
    const loadedKb = settled.kb;
    const d = await postAndReceive(b, ctx, side, {
      postPaths: [postPath],
      rate: settings.fanoutRate,
      seconds: settings.fanoutSeconds,
      streams: opened.opened,
      serverPid: server.proc.pid,
      nchanUrl: server.url,
    });
    return { ...opened, ...d, perConnKb: (loadedKb - baseKb) / opened.opened, settleS: settled.seconds };
  } finally {
    // The server closes first: the closed sockets' TIME_WAIT lands on its side, not on the clients' ports.
    await server.proc.stop(1500);
    await Promise.all(ctx.clients.map((c) => c.call('close')));
  }
}

function roundNotes(side: string, rounds: (Delivery & Partial<Opened>)[]): string[] {
  if (rounds.length === 0) return [];
  const out: string[] = [];
  const lost = rounds.reduce((n, r) => n + Math.max(0, r.expected - r.deliveries), 0);
  const expected = rounds.reduce((n, r) => n + r.expected, 0);
  if (lost > 0) out.push(`${side}: ${lost} of ${expected} expected deliveries had not arrived 2 s after the last one`);
  const failedPosts = rounds.reduce((n, r) => n + r.posts.failed, 0);
  if (failedPosts > 0) out.push(`${side}: ${failedPosts} posts failed (${JSON.stringify(rounds.map((r) => r.posts.statuses))})`);
  const failedStreams = rounds.reduce((n, r) => n + (r.failed ?? 0), 0);
  if (failedStreams > 0) out.push(`${side}: ${failedStreams} streams failed to open`);
  if (rounds[0]!.ms !== undefined) out.push(`${side}: streams opened in ${rounds.map((r) => ((r.ms ?? 0) / 1000).toFixed(1)).join(' / ')} s`);
  return out;
}

/** Scenarios 3 and 5 share their rounds; 4 runs after them. */
export async function streams(b: Bench, fanout: Scenario, memory: Scenario, e2e: Scenario, run: { fanout: boolean; e2e: boolean }) {
  const { clients, procs, fdLimit } = await sseClients(b, settings.sseClientProcesses);
  const nchan = findNchan();
  const ctx: StreamCtx = { clients, procs, keys: [], userIds: [], metadata: true, fdLimit, dataBytes: 550, nchan: typeof nchan === 'string' ? null : nchan };
  if (typeof nchan === 'string' && run.fanout) for (const s of [fanout, memory]) s.notes.push(`Nchan not measured: ${nchan}`);
  const guard = async (list: Scenario[], fn: () => Promise<void>) => {
    try {
      await fn();
    } catch (err) {
      if (err instanceof Unavailable) return;
      b.log(`error: ${(err as Error).stack ?? err}`);
      for (const s of list) {
        s.status = 'failed';
        s.reason = (err as Error).message.slice(0, 500);
      }
    }
  };
  try {
    const users = await streamUsers(b, settings.sseUsers);
    ctx.keys = users.keys;
    ctx.userIds = users.userIds;
    const fanoutChannel = await channel(b, `bench-fanout-${b.id}`);
    await addMembers(b, fanoutChannel, users.userIds);
    const reason = await probeStream(b, ctx, fanoutChannel);
    for (const s of [fanout, memory, e2e]) if (reason) s.reason = reason;
    if (run.fanout) await guard([fanout, memory], () => fanoutAndMemory(b, ctx, fanout, memory, fanoutChannel, reason === null));
    if (run.e2e) await guard([e2e], () => endToEnd(b, ctx, e2e, users, reason === null));
  } finally {
    for (const p of procs) await p.stop(1000);
  }
}

async function fanoutAndMemory(b: Bench, ctx: StreamCtx, fanout: Scenario, memory: Scenario, channelId: string, available: boolean) {
  // Each process holds its streams' sockets: keep well inside the open-file limit.
  const perProcess = ctx.fdLimit - 500;
  let n = settings.sseConnections;
  if (n > perProcess) {
    n = perProcess;
    const note = `the open-file limit here is ${ctx.fdLimit} (ulimit -n could not go higher): ${n} streams instead of ${settings.sseConnections}`;
    fanout.notes.push(note);
    memory.notes.push(note);
  }
  const axidSpecs: StreamSpec[] = Array.from({ length: n }, (_, i) => ({ path: '/api/v1/stream', key: ctx.keys[i % ctx.keys.length] }));
  const floorSpecs: StreamSpec[] = Array.from({ length: n }, () => ({ path: `/api/v1/stream?channel=${channelId}` }));
  const nchanSpecs: StreamSpec[] = floorSpecs.map((spec) => ({ ...spec, ready: 'response' }));
  const postPath = `/api/v1/channels/${channelId}/messages`;
  const { a, f, n: c } = await interleave(
    b,
    'fan-out',
    available ? (r) => fanoutRound(b, ctx, 'axid', axidSpecs, postPath, r) : null,
    (r) => fanoutRound(b, ctx, 'floor', floorSpecs, postPath, r),
    ctx.nchan ? (r) => fanoutRound(b, ctx, 'nchan', nchanSpecs, postPath, r) : null,
  );
  const open = [...a, ...f, ...c].map((r) => r.opened);
  const count = Math.min(...open) === Math.max(...open) ? `${open[0]}` : `${Math.min(...open)}–${Math.max(...open)}`;
  fanout.notes.push(
    `${count} streams (${ctx.keys.length} users), ${settings.fanoutRate} posts/s for ${settings.fanoutSeconds} s`,
    ...roundNotes('Axid', a),
    ...roundNotes('floor', f),
    ...roundNotes('Nchan', c),
  );
  if (ctx.nchan) fanout.notes.push(`Nchan: ${ctx.nchan.nginx}${ctx.nchan.module ? ` with ${ctx.nchan.module}` : ''}, one process; its posts padded to ${ctx.dataBytes} bytes of data, the size of Axid's frame`);
  const of = (pick: (r: FanoutRound) => number) => (ctx.nchan ? { nchan: c.map(pick) } : {});
  fanout.metrics.push(
    {
      metric: 'deliveries/s',
      unit: '/s',
      axid: a.map((r) => r.deliveriesPerS),
      floor: f.map((r) => r.deliveriesPerS),
      target: { kind: 'ratio', op: '>=', value: 0.7 },
      ...of((r) => r.deliveriesPerS),
      nchanTarget: { kind: 'ratio', op: '>=', value: 1.0 },
    },
    {
      metric: 'p99 delivery latency',
      unit: 'ms',
      axid: a.map((r) => r.p99),
      floor: f.map((r) => r.p99),
      target: { kind: 'ratio', op: '<=', value: 1.5 },
      ...of((r) => r.p99),
      nchanTarget: { kind: 'ratio', op: '<=', value: 1.5 },
    },
    { metric: 'p50 delivery latency', unit: 'ms', axid: a.map((r) => r.p50), floor: f.map((r) => r.p50), ...of((r) => r.p50) },
    {
      metric: 'server CPU per delivery',
      unit: 'µs',
      axid: a.map((r) => r.cpuUsPerDelivery),
      floor: f.map((r) => r.cpuUsPerDelivery),
      ...of((r) => r.cpuUsPerDelivery),
      nchanTarget: { kind: 'ratio', op: '<=', value: 1.15 },
    },
  );
  const settle = (side: string, rounds: FanoutRound[]) => (rounds.length ? [`${side}: RSS settled after ${rounds.map((r) => r.settleS.toFixed(0)).join(' / ')} s idle`] : []);
  memory.notes.push(
    `RSS with ${count} idle streams, once it stopped falling, minus RSS with none, a fresh server process each round`,
    ...settle('Axid', a),
    ...settle('floor', f),
    ...settle('Nchan', c),
  );
  memory.metrics.push({
    metric: 'memory per stream',
    unit: 'KB',
    axid: a.map((r) => r.perConnKb),
    floor: f.map((r) => r.perConnKb),
    target: { kind: 'ratio', op: '<=', value: 1.5 },
    ...of((r) => r.perConnKb),
    nchanTarget: { kind: 'ratio', op: '<=', value: 1.2 },
  });
  if (available) memory.metrics.push({ metric: 'memory per stream, Axid', unit: 'KB', axid: a.map((r) => r.perConnKb), floor: [], target: { kind: 'abs', op: '<', value: 16, aim: true } });
}

async function endToEnd(b: Bench, ctx: StreamCtx, s: Scenario, users: { keys: string[]; userIds: string[] }, available: boolean) {
  const channels: string[] = [];
  for (let i = 0; i < settings.e2eChannels; i++) {
    const id = await channel(b, `bench-e2e-${b.id}-${i}`);
    await addMembers(b, id, [users.userIds[i % users.userIds.length]!]);
    channels.push(id);
  }
  const perChannel = Math.round(settings.e2eConnections / settings.e2eChannels);
  const axidSpecs: StreamSpec[] = [];
  const floorSpecs: StreamSpec[] = [];
  for (let i = 0; i < settings.e2eChannels; i++) {
    for (let j = 0; j < perChannel; j++) {
      axidSpecs.push({ path: '/api/v1/stream', key: users.keys[i % users.keys.length] });
      floorSpecs.push({ path: `/api/v1/stream?channel=${channels[i]}` });
    }
  }
  // Both servers stay up with their streams open for all rounds; only one side posts at a time.
  const floor = await startFloorSse(b);
  const gw = available ? await startGateway(b) : null;
  try {
    const floorOpen = await openStreams(b, ctx, 'floor', floor.url, floorSpecs);
    const axidOpen = gw ? await openStreams(b, ctx, 'Axid', gw.url, axidSpecs) : null;
    const o = { postPaths: channels.map((c) => `/api/v1/channels/${c}/messages`), rate: settings.e2eRate };
    // Warm-up, not measured.
    const axidSide = gw && axidOpen ? { streams: axidOpen.opened, serverPid: gw.proc.pid } : null;
    const floorSide = { streams: floorOpen.opened, serverPid: floor.proc.pid };
    if (axidSide) await postAndReceive(b, ctx, 'axid', { ...o, ...axidSide, seconds: 1 });
    await postAndReceive(b, ctx, 'floor', { ...o, ...floorSide, seconds: 1 });
    const { a, f } = await interleave(
      b,
      'end to end',
      axidSide ? () => postAndReceive(b, ctx, 'axid', { ...o, ...axidSide, seconds: settings.e2eSeconds }) : null,
      () => postAndReceive(b, ctx, 'floor', { ...o, ...floorSide, seconds: settings.e2eSeconds }),
    );
    s.notes.push(
      `${floorOpen.opened} floor / ${axidOpen?.opened ?? 0} Axid streams over ${settings.e2eChannels} channels (${perChannel} streams of one user each), ${settings.e2eRate} posts/s round robin for ${settings.e2eSeconds} s`,
      ...roundNotes('Axid', a),
      ...roundNotes('floor', f),
    );
    s.metrics.push(
      { metric: 'p99 post→receipt', unit: 'ms', axid: a.map((r) => r.p99), floor: f.map((r) => r.p99), target: { kind: 'ratio', op: '<=', value: 1.5 } },
      { metric: 'p50 post→receipt', unit: 'ms', axid: a.map((r) => r.p50), floor: f.map((r) => r.p50) },
      { metric: 'deliveries/s', unit: '/s', axid: a.map((r) => r.deliveriesPerS), floor: f.map((r) => r.deliveriesPerS) },
      // The POST's own answer while the streams are fed: fan-out must not hold up the write path.
      { metric: 'POST p99 latency', unit: 'ms', axid: a.map((r) => r.posts.p99), floor: f.map((r) => r.posts.p99), target: { kind: 'ratio', op: '<=', value: 1.5 } },
    );
    if (available) s.metrics.push({ metric: 'p99 post→receipt, Axid', unit: 'ms', axid: a.map((r) => r.p99), floor: [], target: { kind: 'abs', op: '<', value: 100 } });
  } finally {
    await gw?.proc.stop(1500);
    await floor.proc.stop(1500);
    await Promise.all(ctx.clients.map((c) => c.call('close')));
  }
}
