// Scenario 8: the hot paths on a ten-million-message workspace against the
// same paths on a 100,000-message one (the size of scenario 2's data set),
// both made by the same recipe (dataset/big-workspace.ts) and kept between
// runs in databases of their own (BENCH_10M_REBUILD=1 builds them again).
// Each path is timed through HTTP, one request at a time, on an Axid api and
// gateway process per data set, the two sets alternating round by round; the
// "floor" column of this scenario is the 100,000-message set. EXPLAIN
// (ANALYZE, BUFFERS) of each path's query on each set goes to
// bench-results/big-explain.md.
import { writeFileSync, mkdirSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import pg from 'pg';
import { generateApiKey } from '../../shared/auth.js';
import { CHANNEL_PAGE, NO_CURSOR, THREAD_PAGE } from '../../services/core/messages/messages.store.js';
import { COMMON_WORD, DATASET_SIZES, RARE_WORD, dataset, type DatasetSize } from './dataset/big-workspace.js';
import { ensureBigWorkspace, type DatasetState } from './dataset/ensure.js';
import { repoRoot } from './lib/proc.js';
import type { Scenario } from './lib/report.js';
import { Histogram } from './lib/stats.js';
import { settings } from './settings.js';
import { Unavailable, call, startAxid, type Bench } from './scenarios.js';

const SAMPLES = Number(process.env.BENCH_10M_SAMPLES ?? 200);
const WARMUP = 20;
const DEEP = 100_000;

interface Target {
  size: DatasetSize;
  database: string;
  url: string;
  state: DatasetState;
  api: string;
  /** The same data set served at FEATURE_LEVEL=3, for search (GET /search/messages exists from level 3). */
  level3Api: string;
  key: string;
  /** Ids and cursors of the paths. */
  ids: { workspace: string; probe: string; channel: string; thread: string; threadChannel: string; deepCursor: string; deepOffset: number };
}

const encodeCursor = (seq: number | string) => Buffer.from(`s${seq}`).toString('base64url');

async function prepare(b: Bench, size: DatasetSize, database: string): Promise<Target> {
  const url = `postgres://postgres@127.0.0.1:5432/${database}`;
  const t = Date.now();
  const state = await ensureBigWorkspace(url, size, { rebuild: process.env.BENCH_10M_REBUILD === '1', log: (m) => b.log(`${size.name}: ${m}`) });
  b.log(`${size.name} data set ${state.builtNow ? 'built' : 'kept'} (${state.buildSeconds.toFixed(0)} s to build, ready in ${((Date.now() - t) / 1000).toFixed(0)} s)`);
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const one = async (sql: string, values: unknown[] = []) => (await db.query(sql, values)).rows[0];
    const workspace = (await one(`SELECT ${dataset.workspaceId} AS id`)).id as string;
    const probe = (await one(`SELECT ${dataset.user(dataset.probeUser)} AS id`)).id as string;
    const channel = (await one(`SELECT ${dataset.channel(dataset.largestChannel)} AS id`)).id as string;
    const largestThread = await one(`SELECT root_message_id AS id, channel_id FROM threads ORDER BY reply_count DESC LIMIT 1`);
    const thread = largestThread.id as string;
    const threadChannel = largestThread.channel_id as string;
    const top = Number((await one(`SELECT count(*) AS n FROM messages WHERE channel_id = $1 AND thread_id IS NULL`, [channel])).n);
    const deepOffset = Math.min(DEEP, Math.max(0, top - 51));
    const deep = await one(`SELECT seq FROM messages WHERE channel_id = $1 AND thread_id IS NULL ORDER BY seq DESC OFFSET $2 LIMIT 1`, [channel, deepOffset]);
    const key = generateApiKey();
    await db.query(`INSERT INTO api_keys (workspace_id, user_id, name, prefix, key_hash) VALUES ($1, $2, 'bench', $3, $4)`, [workspace, probe, key.prefix, key.hash]);
    const api = await startAxid(
      { ...b, axidEnv: { ...b.axidEnv, DATABASE_URL: url, REDIS_KEY_PREFIX: `${b.prefix}${size.name}:` } },
      `axid-${size.name}`,
      'api,gateway',
    );
    const level3 = await startAxid(
      { ...b, axidEnv: { ...b.axidEnv, DATABASE_URL: url, REDIS_KEY_PREFIX: `${b.prefix}${size.name}3:`, FEATURE_LEVEL: '3', MIGRATE_ON_START: 'false' } },
      `axid-${size.name}-level3`,
      'api',
    );
    return { size, database, url, state, api: api.url, level3Api: level3.url, key: key.key, ids: { workspace, probe, channel, thread, threadChannel, deepCursor: encodeCursor(deep.seq), deepOffset } };
  } finally {
    await db.end();
  }
}

/** Milliseconds until the stream's init frame (memberships loaded, snapshot read). */
function streamInit(t: Target): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = http.get(`${t.api}/api/v1/stream`, { headers: { authorization: `Bearer ${t.key}` }, agent: false }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`stream answered ${res.statusCode}`));
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        if (buffer.includes('event: init')) {
          const ms = performance.now() - started;
          req.destroy();
          resolve(ms);
        }
      });
    });
    req.on('error', (err) => (err.message === 'socket hang up' ? undefined : reject(err)));
  });
}

interface Path {
  name: string;
  run(t: Target, i: number): Promise<number>;
}

async function timed(url: string, method: string, key: string, body?: unknown, status = 200): Promise<number> {
  const started = performance.now();
  const res = await call(url, method, body, key);
  const ms = performance.now() - started;
  if (res.status !== status) throw new Error(`${method} ${url} answered ${res.status}: ${res.text.slice(0, 200)}`);
  return ms;
}

const PATHS: Path[] = [
  { name: 'first page, largest channel', run: (t) => timed(`${t.api}/api/v1/channels/${t.ids.channel}/messages?limit=50`, 'GET', t.key) },
  { name: 'page 100,000 deep, largest channel', run: (t) => timed(`${t.api}/api/v1/channels/${t.ids.channel}/messages?limit=50&cursor=${t.ids.deepCursor}`, 'GET', t.key) },
  { name: "largest thread's replies", run: (t) => timed(`${t.api}/api/v1/channels/${t.ids.threadChannel}/messages?limit=50&thread_id=${t.ids.thread}`, 'GET', t.key) },
  { name: 'channel list, user in 200 channels', run: (t) => timed(`${t.api}/api/v1/channels?limit=100`, 'GET', t.key) },
  { name: "stream init, that user", run: (t) => streamInit(t) },
  { name: 'post into the largest channel', run: (t, i) => timed(`${t.api}/api/v1/channels/${t.ids.channel}/messages`, 'POST', t.key, { content: `bench 10m post ${i}` }, 201) },
];

/**
 * Search (level 3, issue 22): a word in about ten messages and one in every
 * other message, across the workspace and within the largest channel.
 * Absolute targets for the rare word; the common word is bounded by the page.
 */
const SEARCH_PATHS: (Path & { target?: { median: number; p99: number } })[] = [
  { name: `search, rare word ("${RARE_WORD}")`, target: { median: 50, p99: 200 }, run: (t) => timed(`${t.level3Api}/api/v1/search/messages?q=${RARE_WORD}&limit=50`, 'GET', t.key) },
  { name: `search, common word ("${COMMON_WORD}")`, run: (t) => timed(`${t.level3Api}/api/v1/search/messages?q=${COMMON_WORD}&limit=50`, 'GET', t.key) },
  { name: `search, rare word in the largest channel`, target: { median: 50, p99: 200 }, run: (t) => timed(`${t.level3Api}/api/v1/search/messages?q=${RARE_WORD}&channel_id=${t.ids.channel}&limit=50`, 'GET', t.key) },
  { name: `search, common word in the largest channel`, run: (t) => timed(`${t.level3Api}/api/v1/search/messages?q=${COMMON_WORD}&channel_id=${t.ids.channel}&limit=50`, 'GET', t.key) },
];

async function measure(t: Target, p: Path) {
  for (let i = 0; i < WARMUP; i++) await p.run(t, i);
  const h = new Histogram();
  for (let i = 0; i < SAMPLES; i++) h.record(await p.run(t, i));
  return { median: h.percentile(50), p99: h.percentile(99) };
}

/** EXPLAIN (ANALYZE, BUFFERS) of each path's query, as the API sends it. */
async function explain(t: Target): Promise<string> {
  const db = new pg.Client({ connectionString: t.url });
  await db.connect();
  const out: string[] = [];
  const plan = async (title: string, sql: string, values: unknown[] = []) => {
    const { rows } = await db.query(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, values);
    out.push(`#### ${title}\n\n\`\`\`\n${rows.map((r) => r['QUERY PLAN']).join('\n')}\n\`\`\`\n`);
  };
  try {
    const deepSeq = Buffer.from(t.ids.deepCursor, 'base64url').toString().slice(1);
    // The page statements as prepared by the API: a generic plan (one plan for every cursor).
    await db.query(`SET plan_cache_mode = force_generic_plan`);
    await db.query(`PREPARE channel_page(uuid, bigint, int) AS ${CHANNEL_PAGE.text}`);
    await db.query(`PREPARE thread_page(uuid, bigint, int) AS ${THREAD_PAGE.text}`);
    await plan('first page, largest channel', `EXECUTE channel_page('${t.ids.channel}', ${NO_CURSOR}, 50)`);
    await plan(`page ${t.ids.deepOffset.toLocaleString('en')} deep, largest channel`, `EXECUTE channel_page('${t.ids.channel}', ${deepSeq}, 50)`);
    await plan("largest thread's replies", `EXECUTE thread_page('${t.ids.thread}', ${NO_CURSOR}, 50)`);
    await db.query(`RESET plan_cache_mode`);
    await plan(
      'channel list, user in 200 channels (listVisibleChannels)',
      `SELECT c.* FROM channels c WHERE c.workspace_id = $1 AND c.kind = 'channel'
         AND (c.is_private = false OR EXISTS (SELECT * FROM channel_members cm WHERE cm.channel_id = c.id AND cm.user_id = $2))
       ORDER BY c.seq LIMIT 101`,
      [t.ids.workspace, t.ids.probe],
    );
    await plan('stream opening: memberships (findStreamHolder)', `SELECT channel_id FROM channel_members WHERE user_id = $1`, [t.ids.probe]);
    const search = (channel: string | null) =>
      `SELECT s.seq FROM message_search s
        WHERE s.words @@ (websearch_to_tsquery('english', $1) || websearch_to_tsquery('simple', $1))
          AND s.workspace_id = $2 ${channel ? `AND s.channel_id = '${channel}'` : ''}
          AND s.channel_id IN (SELECT c.id FROM channels c WHERE c.workspace_id = $2
                                AND ((c.kind = 'channel' AND NOT c.is_private)
                                     OR EXISTS (SELECT 1 FROM channel_members cm WHERE cm.channel_id = c.id AND cm.user_id = $3)))
        ORDER BY s.seq DESC LIMIT 51`;
    await plan(`search, rare word (services/core/search/search.store.ts, rendering left out)`, search(null), [RARE_WORD, t.ids.workspace, t.ids.probe]);
    await plan(`search, common word`, search(null), [COMMON_WORD, t.ids.workspace, t.ids.probe]);
    await plan(`search, rare word in the largest channel`, search(t.ids.channel), [RARE_WORD, t.ids.workspace, t.ids.probe]);
    await db.query('BEGIN');
    await plan(
      'post into the largest channel (the insert, rolled back)',
      `WITH m AS (INSERT INTO messages (id, workspace_id, channel_id, author_id, content, created_at)
                  VALUES (gen_random_uuid(), $1, $2, $3, 'explain', now()))
       INSERT INTO outbox (event) VALUES ('{}'::jsonb) RETURNING id`,
      [t.ids.workspace, t.ids.channel, t.ids.probe],
    );
    await db.query('ROLLBACK');
  } finally {
    await db.end();
  }
  return out.join('\n');
}

/** Whether a database exists (a kept data set). */
async function databaseExists(name: string): Promise<boolean> {
  const admin = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
  await admin.connect();
  try {
    return (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1;
  } finally {
    await admin.end();
  }
}

export async function bigWorkspace(b: Bench, s: Scenario): Promise<void> {
  const bigDatabase = process.env.BENCH_10M_DATABASE ?? 'axid_bench_10m';
  // Building the big set takes about an hour here: BENCH_10M_BUILD=0 runs the rest of the bench without it.
  if (process.env.BENCH_10M_BUILD === '0' && !(await databaseExists(bigDatabase))) {
    throw new Unavailable(`the ten-million-message set is not on this machine and BENCH_10M_BUILD=0 (building it takes about an hour); its last figures are in docs/bench.md, "Ten million messages"`);
  }
  const big = await prepare(b, DATASET_SIZES.full, bigDatabase);
  const small = await prepare(b, DATASET_SIZES.compare, 'axid_bench_100k');
  for (const t of [big, small]) {
    s.notes.push(
      `${t.size.name} set (${t.size.messages.toLocaleString('en')} messages, database ${t.database}): built in ${t.state.buildSeconds.toFixed(0)} s at ${t.state.builtAt}${t.state.builtNow ? ' (this run)' : ' (kept from an earlier run)'}`,
    );
  }
  s.notes.push(
    `the floor column is the same path on the ${DATASET_SIZES.compare.messages.toLocaleString('en')}-message set (scenario 2's size), made by the same recipe; target: within 2x`,
    `one request at a time, ${SAMPLES} per path per round after ${WARMUP} of warm-up; the deep page is ${big.ids.deepOffset.toLocaleString('en')} messages deep on the big set and ${small.ids.deepOffset.toLocaleString('en')} (all it has) on the small one`,
  );
  const results = new Map<string, { big: { median: number; p99: number }[]; small: { median: number; p99: number }[] }>();
  for (let round = 1; round <= settings.rounds; round++) {
    for (const p of process.env.BENCH_10M_SEARCH_ONLY === '1' ? SEARCH_PATHS : [...PATHS, ...SEARCH_PATHS]) {
      const r = results.get(p.name) ?? { big: [], small: [] };
      r.big.push(await measure(big, p));
      r.small.push(await measure(small, p));
      results.set(p.name, r);
    }
    b.log(`10M: round ${round} done`);
  }
  for (const p of process.env.BENCH_10M_SEARCH_ONLY === '1' ? [] : PATHS) {
    const r = results.get(p.name)!;
    s.metrics.push(
      { metric: `${p.name}, median`, unit: 'ms', axid: r.big.map((x) => x.median), floor: r.small.map((x) => x.median), target: { kind: 'ratio', op: '<=', value: 2 } },
      { metric: `${p.name}, p99`, unit: 'ms', axid: r.big.map((x) => x.p99), floor: r.small.map((x) => x.p99) },
    );
  }
  for (const p of SEARCH_PATHS) {
    const r = results.get(p.name)!;
    s.metrics.push(
      { metric: `${p.name}, median`, unit: 'ms', axid: r.big.map((x) => x.median), floor: r.small.map((x) => x.median), ...(p.target ? { target: { kind: 'abs' as const, op: '<' as const, value: p.target.median } } : {}) },
      { metric: `${p.name}, p99`, unit: 'ms', axid: r.big.map((x) => x.p99), floor: r.small.map((x) => x.p99), ...(p.target ? { target: { kind: 'abs' as const, op: '<' as const, value: p.target.p99 } } : {}) },
    );
  }
  const plans = [`## ${big.size.name} set\n\n${await explain(big)}`, `## ${small.size.name} set\n\n${await explain(small)}`].join('\n');
  // The kept sets keep no key of a finished run.
  for (const t of [big, small]) {
    const db = new pg.Client({ connectionString: t.url });
    await db.connect();
    await db.query(`DELETE FROM api_keys WHERE name = 'bench'`).finally(() => db.end());
  }
  mkdirSync(path.join(repoRoot, 'bench-results'), { recursive: true });
  writeFileSync(path.join(repoRoot, 'bench-results/big-explain.md'), `# EXPLAIN (ANALYZE, BUFFERS) of scenario 8's paths\n\n${plans}`);
  s.notes.push('EXPLAIN (ANALYZE, BUFFERS) of each path on both sets: bench-results/big-explain.md (copied into docs/bench.md)');
}
