// `tsx test/loadtest/stream-memory.ts`: where a gateway's memory per idle
// stream goes (docs/bench.md, scenario 5). Starts a gateway process on a
// database and Redis prefix of its own, opens STREAMS idle streams from this
// process (100 users, members of one channel, as the bench's), and compares
// two heap snapshots of the gateway, taken through --heapsnapshot-signal
// (each after a full collection: live objects only) with one stream and with
// all of them open: self size and count per stream by kind and constructor.
// Also RSS and the heap and external figures of /metrics (what is not in the
// snapshot: node's buffers and the young generation's free space). Removes
// what it created. STREAM_LEVEL=3 for the level-3 stream (replay, presence).
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, mkdtempSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Redis } from 'ioredis';
import { freePort } from '../../shared/embedded.js';
import { deleteKeysOfPrefix } from '../../shared/redis.js';
import { memoryOf, spawnNode, stopAll, waitReady } from '../bench/lib/proc.js';

const STREAMS = Number(process.env.STREAMS ?? 10_000);
const USERS = 100;
const LEVEL = process.env.STREAM_LEVEL ?? '2';
const SETTLE_MS = Number(process.env.SETTLE_SECONDS ?? 10) * 1000;
const log = (m: string) => process.stderr.write(`[stream-memory ${new Date().toISOString().slice(11, 19)}] ${m}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const id = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
const database = `axid_streammem_${id}`;
const databaseUrl = `postgres://postgres@127.0.0.1:5432/${database}`;
const prefix = `axidstreammem:${id}:`;
const dir = mkdtempSync(path.join(os.tmpdir(), 'axid-stream-memory-'));
const adminKey = `axidbench_${randomBytes(24).toString('base64url')}`;

/** Self size and count by `<kind> <name>` of a .heapsnapshot file. */
function tally(file: string): Map<string, { bytes: number; count: number }> {
  const snap = JSON.parse(readFileSync(file, 'utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snap.snapshot.meta.node_fields;
  const width = fields.length;
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [number, number, number];
  const types = snap.snapshot.meta.node_types[0];
  const out = new Map<string, { bytes: number; count: number }>();
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + typeAt]!]!;
    // Strings and code by kind alone: their names are their contents.
    const name = ['string', 'concatenated string', 'sliced string', 'number', 'code', 'hidden'].includes(type) ? '' : snap.strings[snap.nodes[i + nameAt]!]!.slice(0, 60);
    const key = `${type} ${name}`.trim();
    const entry = out.get(key) ?? { bytes: 0, count: 0 };
    entry.bytes += snap.nodes[i + sizeAt]!;
    entry.count++;
    out.set(key, entry);
  }
  return out;
}

/** Asks the gateway for a snapshot and waits for its file. */
async function snapshot(pid: number): Promise<string> {
  const before = new Set(readdirSync(dir));
  process.kill(pid, 'SIGUSR2');
  for (;;) {
    await sleep(500);
    const file = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot') && !before.has(f));
    if (!file) continue;
    // Written in one go; its size stops changing once done.
    const full = path.join(dir, file);
    let size = -1;
    for (;;) {
      const now = readFileSync(full).length;
      if (now === size && now > 0) return full;
      size = now;
      await sleep(1000);
    }
  }
}

async function figures(url: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const name of ['nodejs_heap_size_used_bytes', 'nodejs_heap_size_total_bytes', 'nodejs_external_memory_bytes', 'process_resident_memory_bytes']) {
    const m = new RegExp(`^${name} (\\S+)`, 'm').exec(text);
    if (m) out[name] = Number(m[1]);
  }
  for (const m of text.matchAll(/^nodejs_heap_space_size_used_bytes\{space="([^"]+)"\} (\S+)/gm)) out[`used ${m[1]}`] = Number(m[2]);
  for (const m of text.matchAll(/^nodejs_heap_space_size_total_bytes\{space="([^"]+)"\} (\S+)/gm)) out[`total ${m[1]}`] = Number(m[2]);
  return out;
}

const admin = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
const sockets: http.ClientRequest[] = [];
let db: pg.Client | null = null;
try {
  await admin.connect();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const gateway = spawnNode('gateway', 'services/main.ts', {
    env: {
      DATABASE_URL: databaseUrl,
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_KEY_PREFIX: prefix,
      ROLES: 'gateway',
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      FEATURE_LEVEL: LEVEL,
      BOOTSTRAP_ADMIN_KEY: adminKey,
      STREAM_MAX_PER_USER: '1000000',
      RATE_LIMIT_POINTS: '1000000000',
    },
    nodeFlags: ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${dir}`, ...(process.env.GATEWAY_NODE_FLAGS ?? '').split(' ').filter(Boolean)],
    raiseFileLimit: true,
  });
  await waitReady(gateway, `${url}/readyz`, 120_000);
  db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  const owner = (await db.query('SELECT u.id, u.workspace_id FROM api_keys k JOIN users u ON u.id = k.user_id LIMIT 1')).rows[0] as { id: string; workspace_id: string };
  const users = (
    await db.query(`INSERT INTO users (workspace_id, name) SELECT $1, 'mem-' || g FROM generate_series(1, $2::int) g RETURNING id`, [owner.workspace_id, USERS])
  ).rows.map((r) => r.id as string);
  const keys = users.map(() => `axidbench_${randomBytes(24).toString('base64url')}`);
  await db.query(
    `INSERT INTO api_keys (workspace_id, user_id, name, prefix, key_hash)
     SELECT $1, u, 'mem', left(k, 12), h FROM unnest($2::uuid[], $3::text[], $4::text[]) AS t(u, k, h)`,
    [owner.workspace_id, users, keys, keys.map((k) => createHash('sha256').update(k).digest('hex'))],
  );
  const channel = (await db.query('INSERT INTO channels (workspace_id, name, created_by) VALUES ($1, $2, $3) RETURNING id', [owner.workspace_id, 'mem', owner.id])).rows[0].id;
  await db.query(`INSERT INTO channel_members (channel_id, user_id, workspace_id) SELECT $1, u, $3 FROM unnest($2::uuid[]) AS t(u)`, [channel, users, owner.workspace_id]);

  // One stream first, so that code loaded on the first stream is in both snapshots.
  const open = (i: number) =>
    new Promise<boolean>((resolve) => {
      const req = http.get(`${url}/api/v1/stream`, { headers: { authorization: `Bearer ${keys[i % keys.length]}` }, agent: false }, (res) => {
        if (res.statusCode !== 200) return resolve(false);
        res.on('data', (chunk: Buffer) => {
          if (chunk.includes('event: init')) resolve(true);
        });
      });
      req.on('error', () => resolve(false));
      sockets.push(req);
    });
  await open(0);
  await sleep(SETTLE_MS);
  const rss0 = memoryOf(gateway.pid).rssKb;
  const fig0 = await figures(url);
  const snap0 = await snapshot(gateway.pid);
  log(`one stream: RSS ${rss0} KB; snapshot ${snap0}`);
  let opened = 1;
  for (let i = 1; i < STREAMS; i += 50) {
    const batch = await Promise.all(Array.from({ length: Math.min(50, STREAMS - i) }, (_, j) => open(i + j)));
    opened += batch.filter(Boolean).length;
  }
  log(`${opened} streams open; waiting ${SETTLE_MS / 1000} s`);
  await sleep(SETTLE_MS);
  const rss1 = memoryOf(gateway.pid).rssKb;
  const fig1 = await figures(url);
  const snap1 = await snapshot(gateway.pid);
  const rss1After = memoryOf(gateway.pid).rssKb;
  const n = opened - 1;
  log(`${opened} streams: RSS ${rss1} KB (${rss1After} after the snapshot's collection)`);

  const [t0, t1] = [tally(snap0), tally(snap1)];
  const rows = [...t1]
    .map(([key, v]) => ({ key, bytes: (v.bytes - (t0.get(key)?.bytes ?? 0)) / n, count: (v.count - (t0.get(key)?.count ?? 0)) / n }))
    .filter((r) => Math.abs(r.bytes) >= 8)
    .sort((a, b) => b.bytes - a.bytes);
  const heapPerStream = rows.reduce((s, r) => s + r.bytes, 0);
  const lines = [
    `level ${LEVEL}, ${n} streams beyond the first`,
    `RSS per stream: ${((rss1 - rss0) / n).toFixed(2)} KB (${((rss1After - rss0) / n).toFixed(2)} KB right after the second snapshot's full collection)`,
    `heap snapshot, live self size per stream: ${(heapPerStream / 1024).toFixed(2)} KB`,
    ...Object.keys(fig1).map((k) => `${k}: ${(((fig1[k]! - (fig0[k] ?? 0)) / n) / 1024).toFixed(2)} KB per stream (${(fig1[k]! / 1048576).toFixed(1)} MB)`),
    '',
    'bytes/stream  objects/stream  kind and name',
    ...rows.slice(0, Number(process.env.TOP ?? 40)).map((r) => `${r.bytes.toFixed(0).padStart(12)}  ${r.count.toFixed(2).padStart(14)}  ${r.key}`),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  for (const s of sockets) s.destroy();
  await stopAll();
  await db?.end().catch(() => undefined);
  await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(database)} WITH (FORCE)`).catch((err: Error) => log(`could not drop ${database}: ${err.message}`));
  await admin.end();
  const redis = new Redis('redis://127.0.0.1:6379');
  await deleteKeysOfPrefix(redis, prefix).catch(() => undefined);
  redis.disconnect();
  if (process.env.KEEP_SNAPSHOTS !== '1') rmSync(dir, { recursive: true, force: true });
  else log(`snapshots kept in ${dir}`);
}
