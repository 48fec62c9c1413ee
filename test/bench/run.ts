// `npm run bench`: starts an Axid stack and the floor programs as child
// processes against the local Postgres and Redis, runs every scenario A B A B,
// prints one table, writes the results, and removes everything it created.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Redis } from 'ioredis';
import { deleteKeysOfPrefix } from '../../shared/redis.js';
import { Rpc } from './lib/rpc.js';
import { benchDir, repoRoot, spawnNode, stopAll } from './lib/proc.js';
import { notes, rowsOf, table, type Scenario } from './lib/report.js';
import { settings } from './settings.js';
import { slackImport } from './slack-import.js';
import { OUTBOX_FLOOR_MODE, Unavailable, history, posts, startAxid, startFloor, streams, upload, webhooks, type Bench } from './scenarios.js';
import { bigWorkspace } from './big.js';
import { scaling } from './scale.js';

const PG_ADMIN = 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = 'redis://127.0.0.1:6379';

const started = Date.now();
const elapsed = () => ((Date.now() - started) / 1000).toFixed(0).padStart(3);
const log = (msg: string) => process.stderr.write(`[bench ${elapsed()} s] ${msg}\n`);

const id = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
const databaseName = `axid_bench_${id}`;
const databaseUrl = `postgres://postgres@127.0.0.1:5432/${databaseName}`;
/** Scenario 9's own database: its api processes relay from it (one relay per database) to the cluster. */
const scaleDatabaseName = `${databaseName}_scale`;
const prefix = `axidbench:${id}:`;
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'axid-bench-'));

const scenarios: Scenario[] = [
  { id: 1, name: 'message posts', status: 'ran', metrics: [], notes: [] },
  { id: 2, name: 'history reads', status: 'ran', metrics: [], notes: [] },
  { id: 3, name: 'fan-out', status: 'ran', metrics: [], notes: [] },
  { id: 4, name: 'end to end', status: 'ran', metrics: [], notes: [] },
  { id: 5, name: 'memory per stream', status: 'ran', metrics: [], notes: [] },
  { id: 6, name: 'upload', status: 'ran', metrics: [], notes: [] },
  { id: 7, name: 'webhook ingest', status: 'ran', metrics: [], notes: [] },
  { id: 8, name: 'ten million messages', status: 'ran', metrics: [], notes: [] },
  { id: 9, name: 'scaling', status: 'ran', metrics: [], notes: [] },
  { id: 10, name: 'Slack import', status: 'ran', metrics: [], notes: [] },
];
const byId = (n: number) => scenarios.find((s) => s.id === n)!;
const wanted = (n: number) => settings.only.length === 0 || settings.only.includes(n);

let cleaning: Promise<void> | null = null;
/** Once; a second caller (Ctrl-C and the run's own end) waits for the same cleanup instead of exiting before it is done. */
function cleanup(db?: pg.Client): Promise<void> {
  return (cleaning ??= removeEverything(db));
}

async function removeEverything(db?: pg.Client) {
  await stopAll();
  await db?.end().catch(() => undefined);
  const admin = new pg.Client({ connectionString: PG_ADMIN });
  try {
    await admin.connect();
    for (const name of [databaseName, scaleDatabaseName]) {
      await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`).catch((err: Error) => log(`could not drop ${name}: ${err.message}`));
    }
  } catch (err) {
    log(`could not drop ${databaseName}: ${(err as Error).message}`);
  } finally {
    await admin.end().catch(() => undefined);
  }
  const redis = new Redis(REDIS_URL, { lazyConnect: true });
  try {
    await redis.connect();
    await deleteKeysOfPrefix(redis, prefix);
  } catch (err) {
    log(`could not delete the Redis keys ${prefix}*: ${(err as Error).message}`);
  } finally {
    redis.disconnect();
  }
  rmSync(dataDir, { recursive: true, force: true });
}

/** Runs one scenario group, turning its outcome into statuses. */
async function attempt(list: Scenario[], fn: () => Promise<void>) {
  const t = Date.now();
  try {
    await fn();
  } catch (err) {
    for (const s of list) {
      if (err instanceof Unavailable || s.reason) {
        s.status = 'unavailable';
        s.reason ??= (err as Error).message;
      } else {
        s.status = 'failed';
        s.reason = (err as Error).message.slice(0, 500);
      }
    }
    if (!(err instanceof Unavailable)) log(`error: ${(err as Error).stack ?? err}`);
  }
  for (const s of list) {
    s.seconds = (Date.now() - t) / 1000;
    if (s.status === 'ran' && s.reason) s.status = 'unavailable';
  }
}

function machine() {
  const cpus = os.cpus();
  return {
    nproc: os.availableParallelism?.() ?? cpus.length,
    cpu: cpus[0]?.model ?? 'unknown',
    memoryGb: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    os: `${os.type()} ${os.release()}`,
  };
}

/** Files a full run rewrites: not counted as local changes to the measured code. */
const OUTPUTS = ['test/bench/results.json', 'test/bench/RESULTS.md', 'README.md', 'docs/bench.md'];

function gitCommit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repoRoot }).toString().trim();
    const dirty = execFileSync(
      'git',
      ['status', '--porcelain', '--untracked-files=no', '--', '.', ...OUTPUTS.map((f) => `:!${f}`)],
      { cwd: repoRoot },
    ).toString().trim();
    return dirty ? `${head}+changes` : head;
  } catch {
    return 'unknown';
  }
}

/** Rewrites the text between the bench:results markers of a document. */
function replaceBlock(file: string, body: string) {
  if (!existsSync(file)) return;
  const current = readFileSync(file, 'utf8');
  const next = current.replace(/<!-- bench:results:start -->[\s\S]*<!-- bench:results:end -->/, () => `<!-- bench:results:start -->\n${body}\n<!-- bench:results:end -->`);
  if (next !== current) writeFileSync(file, next);
}

function write(totalS: number, b: Partial<Bench>) {
  const m = machine();
  const rows = scenarios.flatMap((s) => rowsOf(s).map((r) => ({ ...r, status: s.status })));
  const json = {
    ranAt: new Date(started).toISOString(),
    commit: gitCommit(),
    seconds: Math.round(totalS),
    machine: m,
    settings: { ...settings, only: settings.only.length ? settings.only : 'all' },
    scenarios: scenarios.map((s) => ({ ...s, rows: rowsOf(s) })),
    globalNotes: [...(b.notes ?? [])],
    rows,
  };
  const text = table(scenarios);
  const noteLines = [...notes(scenarios), ...(b.notes ?? [])];
  const machineLine = `${m.nproc} cores (${m.cpu}), ${m.memoryGb} GB, Node ${m.node}, ${m.os}; commit ${json.commit}; ${Math.round(totalS)} s; ${json.ranAt}`;
  const md = [
    '# Bench results',
    '',
    `Written by \`npm run bench\` (see docs/bench.md). Machine: ${machineLine}.`,
    '',
    text,
    '',
    ...noteLines.map((n) => `- ${n}`),
    '',
  ].join('\n');
  mkdirSync(path.join(repoRoot, 'bench-results'), { recursive: true });
  writeFileSync(path.join(repoRoot, 'bench-results/latest.json'), JSON.stringify(json, null, 2) + '\n');
  if (settings.only.length === 0 && process.env.BENCH_NO_COMMIT_COPY !== '1') {
    writeFileSync(path.join(benchDir, 'results.json'), JSON.stringify(json, null, 2) + '\n');
    writeFileSync(path.join(benchDir, 'RESULTS.md'), md);
    // docs/bench.md gets the table and its notes; the README the table alone.
    const withNotes = `Machine: ${machineLine}.\n\n${text}\n\n${noteLines.map((n) => `- ${n}`).join('\n')}`;
    replaceBlock(path.join(repoRoot, 'docs/bench.md'), withNotes);
    replaceBlock(path.join(repoRoot, 'README.md'), `Machine: ${machineLine}.\n\n${text}`);
  }
  process.stdout.write(`\n${text}\n\n${noteLines.map((n) => `- ${n}`).join('\n')}\n\nMachine: ${machineLine}\nResults: bench-results/latest.json\n`);
}

async function main() {
  const b: Partial<Bench> = { id, databaseUrl, prefix, dataDir, notes: new Set(), log };
  let db: pg.Client | undefined;
  const interrupted = async () => {
    log('interrupted: cleaning up');
    await cleanup(db);
    process.exit(130);
  };
  process.once('SIGINT', () => void interrupted());
  process.once('SIGTERM', () => void interrupted());
  try {
    log(`database ${databaseName}, Redis prefix ${prefix}`);
    const s3 = await startFloor('s3rver', 's3.ts', { S3_DIR: path.join(dataDir, 's3'), S3_BUCKET: 'axid-files' });
    mkdirSync(path.join(dataDir, 's3'), { recursive: true });
    b.s3 = { endpoint: s3.url, bucket: 'axid-files' };
    const adminKey = `axidbench_${randomBytes(24).toString('base64url')}`;
    b.adminKey = adminKey;
    b.floorStreamKey = `${prefix}floor:events`;
    b.axidEnv = {
      DATABASE_URL: databaseUrl,
      REDIS_URL,
      REDIS_KEY_PREFIX: prefix,
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      RATE_LIMIT_POINTS: '1000000000',
      // 100 streams per user in scenarios 3 to 5 (the default cap is 50).
      STREAM_MAX_PER_USER: '1000000',
      BOOTSTRAP_ADMIN_KEY: adminKey,
      S3_ENDPOINT: s3.url,
      S3_BUCKET: 'axid-files',
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
    };
    b.api = await startAxid(b as Bench, 'axid-api', 'api,worker');
    log(`Axid api,worker at ${b.api.url}`);
    db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    b.db = db;
    const owner = await db.query(
      'SELECT u.id, u.workspace_id FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.key_hash = encode(sha256($1::bytea), $2)',
      [b.adminKey, 'hex'],
    );
    if (!owner.rows[0]) throw new Error('the bootstrap owner was not found in the bench database');
    b.ownerId = owner.rows[0].id;
    b.workspaceId = owner.rows[0].workspace_id;
    await db.query(`
      CREATE TABLE floor_messages (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        seq bigint GENERATED ALWAYS AS IDENTITY,
        channel_id uuid NOT NULL,
        author_id uuid,
        content text NOT NULL,
        metadata jsonb,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX floor_messages_channel_seq ON floor_messages (channel_id, seq DESC);
      -- The outbox floor's (servers/floor-post-outbox.ts): the same message table,
      -- the writing transaction's id for its cursor, and an outbox like Axid's.
      CREATE TABLE floor_ob_messages (LIKE floor_messages INCLUDING ALL, xid xid8);
      CREATE INDEX floor_ob_messages_xid ON floor_ob_messages (xid) WHERE xid IS NOT NULL;
      CREATE TABLE floor_outbox (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        event jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE floor_outbox_slim (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        message_id uuid NOT NULL
      );
    `);
    b.floorPost = await startFloor('floor-post', 'floor-post.ts', {
      DATABASE_URL: databaseUrl,
      REDIS_URL,
      STREAM_KEY: `${prefix}floor:events`,
      AUTHOR_ID: owner.rows[0].id,
    });
    b.floorOutbox = await startFloor('floor-post-outbox', 'floor-post-outbox.ts', {
      DATABASE_URL: databaseUrl,
      REDIS_URL,
      STREAM_KEY: `${prefix}floor:outbox-events`,
      AUTHOR_ID: owner.rows[0].id,
      FLOOR_OUTBOX: OUTBOX_FLOOR_MODE,
    });
    const loadProc = spawnNode('loadgen', 'test/bench/load/loadgen.ts', { ipc: true });
    b.loadgen = new Rpc(loadProc.child, 'loadgen');
    await b.loadgen.ready;
    const bench = b as Bench;

    const skip = (s: Scenario) => {
      s.status = 'skipped';
      s.reason = 'not in BENCH_ONLY';
    };
    for (const [n, fn] of [
      [1, posts],
      [7, webhooks],
      [2, history],
      [6, upload],
      [8, bigWorkspace],
      [10, slackImport],
    ] as const) {
      const s = byId(n);
      if (!wanted(n)) {
        skip(s);
        continue;
      }
      log(`scenario ${n}: ${s.name}`);
      await attempt([s], () => fn(bench, s));
    }
    const run = { fanout: wanted(3) || wanted(5), e2e: wanted(4) };
    if (!run.fanout) [3, 5].forEach((n) => skip(byId(n)));
    if (!run.e2e) skip(byId(4));
    if (run.fanout || run.e2e) {
      log('scenarios 3, 5 and 4: streams');
      const group = [byId(3), byId(5), byId(4)].filter((s) => s.status !== 'skipped');
      await attempt(group, () => streams(bench, byId(3), byId(5), byId(4), run));
    }
    if (wanted(9)) {
      log('scenario 9: scaling');
      await attempt([byId(9)], () => scaling(bench, byId(9), `postgres://postgres@127.0.0.1:5432/${scaleDatabaseName}`));
    } else skip(byId(9));
  } catch (err) {
    log(`setup failed: ${(err as Error).stack ?? err}`);
    for (const s of scenarios) if (s.status === 'ran' && s.metrics.length === 0) Object.assign(s, { status: 'failed', reason: `setup: ${(err as Error).message.slice(0, 300)}` });
  } finally {
    log('cleaning up');
    await cleanup(db);
  }
  write((Date.now() - started) / 1000, b);
  process.exit(0);
}

void main();
