// `npm run loadtest`: how many simulated users this box holds, the figure
// Mattermost publishes for its servers. Each user holds an event stream open
// and acts as Mattermost's load-test-ng "simulative" controller does (its
// actions, their weights and its idle times: ACTIONS below, with the source),
// over the ten-million-message workspace of bench scenario 8 (built once and
// kept: test/bench/dataset). Users are added step by step; each step is
// judged over its measuring window with Mattermost's health thresholds
// (average request ≤ 100 ms, p99 ≤ 2 s, 5xx and timeouts ≤ 0.025 %), and the
// run stops at the first step that breaks one, reporting the last healthy count.
//
// Everything runs on this machine: Axid (an api,worker process and a gateway
// process), PostgreSQL, Redis, this process (which starts and measures them)
// and the load generator (loadgen.ts: the users), a process of its own whose
// CPU is counted apart. By default it reaches Axid over loopback; with
// LOADTEST_NETNS=1 it runs in a network namespace of its own under a CPU
// quota of LOADTEST_LOADGEN_CPUS cores (netns.ts), so that what Axid's
// processes are measured on is not also the load generator's. Each step
// records the machine's load average beside the figures. Bounded:
// LOADTEST_MAX_USERS users, LOADTEST_MAX_SECONDS in all; what it added to the
// database (keys, posts, reactions, conversations, joins) is removed at the end.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../../shared/embedded.js';
import { DATASET_SIZES } from '../bench/dataset/big-workspace.js';
import { ensureBigWorkspace } from '../bench/dataset/ensure.js';
import { cpuMsOf, repoRoot, spawnNode, stopAll, waitReady } from '../bench/lib/proc.js';
import { pgCost, pgMark } from '../bench/lib/pgcost.js';
import type { FromLoadgen, ToLoadgen, UserSpec, WindowReport } from './loadgen.js';
import { insertKeys } from './setup.js';
import { makeLoadgenCorner, NETNS_REFUSED, type LoadgenCorner } from './netns.js';

const int = (name: string, fallback: number) => (process.env[name] && /^\d+$/.test(process.env[name]!) ? Number(process.env[name]) : fallback);
const STEPS = (process.env.LOADTEST_STEPS ?? '250,500,1000,1500,2000,3000,4000,5000,6000,8000,10000').split(',').map(Number);
const MAX_USERS = int('LOADTEST_MAX_USERS', 10_000);
const MAX_SECONDS = int('LOADTEST_MAX_SECONDS', 1_500);
/** Each step: users are added over RAMP, then measured over WINDOW (Mattermost's queries use 1-minute windows). */
const RAMP_SECONDS = int('LOADTEST_RAMP_SECONDS', 15);
const WINDOW_SECONDS = int('LOADTEST_WINDOW_SECONDS', 60);
/** The data set: `full` (ten million messages, the figure's), or `compare` / `small` to try the tool out. */
const DATASET = DATASET_SIZES[(process.env.LOADTEST_DATASET ?? 'full') as keyof typeof DATASET_SIZES] ?? DATASET_SIZES.full;
const DATABASE = process.env.LOADTEST_DATABASE ?? (DATASET === DATASET_SIZES.full ? 'axid_bench_10m' : `axid_loadtest_${DATASET.name}`);
/** LOADTEST_PG_PORT: another PostgreSQL server on this machine (one started with pg_stat_statements, whose statements each step then reports). */
const PG_PORT = int('LOADTEST_PG_PORT', 5432);
/** LOADTEST_NETNS=1: the load generator in a network namespace of its own, under a quota of LOADTEST_LOADGEN_CPUS cores. */
const NETNS = process.env.LOADTEST_NETNS === '1';
const LOADGEN_CPUS = Number(process.env.LOADTEST_LOADGEN_CPUS ?? 1) || 1;
/**
 * LOADTEST_PROFILE=1: each step's window is sampled by `perf` (Axid's two
 * processes, started with --perf-basic-prof so their JavaScript has names,
 * and PostgreSQL's backends of the database), and a report of where each
 * spent its CPU is written beside loadtest.json (bench-results/loadtest-profile-<users>-<process>.txt).
 */
const PROFILE = process.env.LOADTEST_PROFILE === '1';
/** LOADTEST_CPU_PROF=<dir>: the API, the gateway and the load generator run with --cpu-prof and write their profiles there when they stop (the whole run, every step). */
const CPU_PROF = process.env.LOADTEST_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.LOADTEST_CPU_PROF)}`] : [];
/** LOADTEST_DRY_RUN=1 (with LOADTEST_NETNS): make the corner, start the load generator in it, reach a server of this process over the veth pair, remove it all; no Axid, no data set. */
const DRY_RUN = process.env.LOADTEST_DRY_RUN === '1';
const HOLD_SECONDS = int('LOADTEST_DRY_RUN_HOLD_SECONDS', 0);

/** Mattermost's health thresholds (config/coordinator.sample.json, MonitorConfig.Queries). */
const THRESHOLDS = { avgMs: 100, p99Ms: 2_000, errorPercent: 0.025 };

const started = Date.now();
const log = (msg: string) => process.stderr.write(`[loadtest ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${msg}\n`);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

// ---------------------------------------------------------------- the load generator

/** The load generator's process, driven over its IPC channel (loadgen.ts). */
class Loadgen {
  private waiting = new Map<string, (m: FromLoadgen) => void>();
  readonly exited: Promise<void>;
  constructor(readonly child: ChildProcess) {
    child.on('message', (m: FromLoadgen) => {
      const resolve = this.waiting.get(m.type);
      this.waiting.delete(m.type);
      resolve?.(m);
    });
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    let out = '';
    child.stderr?.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-4000)));
    child.once('exit', (code, signal) => {
      // Whatever was asked gets no answer now: the asks time out.
      if (code !== 0 && code !== null) log(`load generator exited with ${code ?? signal}: ${out.trim()}`);
    });
  }
  get pid() {
    return this.child.pid!;
  }
  send(m: ToLoadgen) {
    if (this.child.connected) this.child.send(m);
  }
  /** Sends `m` and waits for the answer of type `answer` (at most 30 s). */
  ask<T extends FromLoadgen['type']>(m: ToLoadgen, answer: T): Promise<Extract<FromLoadgen, { type: T }>> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the load generator did not answer ${m.type}`)), 30_000);
      this.waiting.set(answer, (r) => {
        clearTimeout(timer);
        resolve(r as Extract<FromLoadgen, { type: T }>);
      });
      this.send(m);
    });
  }
}

/** Starts loadgen.ts: here, or in the namespace under its quota. */
function startLoadgen(corner: LoadgenCorner | null): Loadgen {
  const args = [...CPU_PROF, '--import', 'tsx', path.join(repoRoot, 'test/loadtest/loadgen.ts')];
  const stdio: ('ignore' | 'pipe' | 'ipc')[] = ['ignore', 'ignore', 'pipe', 'ipc'];
  // It inherits this process's file limit, which `npm run loadtest` raises for its many streams (package.json).
  const child = corner ? corner.spawn(process.execPath, args, { env: process.env, stdio, cwd: repoRoot }) : spawn(process.execPath, args, { env: process.env, stdio, cwd: repoRoot });
  return new Loadgen(child);
}

// ---------------------------------------------------------------- the run

interface StepResult {
  users: number;
  seconds: number;
  requests: number;
  rps: number;
  avgMs: number;
  p99Ms: number;
  errors5xx: number;
  timeouts: number;
  errorPercent: number;
  eventsPerSecond: number;
  apiCpuPercent: number;
  gatewayCpuPercent: number;
  postgresCpuPercent: number;
  /** The load generator's process alone (its own /proc figures), in % of one core. */
  loadgenCpuPercent: number;
  /** Where it had a quota (LOADTEST_NETNS): the time the quota held it back, in % of the window. */
  loadgenThrottledPercent: number | null;
  /** This process (starting, sampling and measuring; no users), in % of one core. */
  runnerCpuPercent: number;
  loadgenLoopDelayP99Ms: number;
  /** Per action: requests, failed (5xx, timeouts), p99 ms. */
  actions: Record<string, { n: number; bad: number; p99: number }>;
  /** Postgres sessions of the database by state and wait event, summed over the window's 1-second samples. */
  postgresWaits: Record<string, number>;
  /** The machine's 1-minute load average at the window's start and end (other work shares these cores). */
  loadAverageStart: number;
  loadAverage: number;
  /**
   * Connections the kernel dropped because a listen queue was full (TcpExt
   * ListenOverflows, the whole machine), over the step's ramp and over its
   * window: each costs its client a SYN sent again 1 s later (then 3 s).
   */
  listenOverflows: { ramp: number; window: number };
  /** Cores busy with anything, from /proc/stat over the window (all processes of the machine), in % of one core. */
  machineCpuPercent: number;
  healthy: boolean;
  broke: string[];
}

/** Jiffies the machine's cores spent running anything (/proc/stat's first line: user, nice, system, irq, softirq; guest time is inside user already, steal is not ours). */
function machineJiffies() {
  const [user, nice, system, , , irq, softirq] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number) as number[];
  return { busy: user! + nice! + system! + irq! + softirq! };
}
const TICKS_PER_SECOND = 100;

/** The machine's TcpExt ListenOverflows counter (/proc/net/netstat). */
function listenOverflows(): number {
  const lines = readFileSync('/proc/net/netstat', 'utf8').split('\n').filter((l) => l.startsWith('TcpExt:'));
  const [names, values] = lines.map((l) => l.trim().split(/\s+/));
  const i = names?.indexOf('ListenOverflows') ?? -1;
  return i > 0 ? Number(values?.[i] ?? 0) : 0;
}

/** Makes the corner, or exits with the documented refusal (code 3). */
function corner(): LoadgenCorner {
  try {
    const made = makeLoadgenCorner(LOADGEN_CPUS);
    log(`load generator: namespace ${made.name} (${made.loadgenAddress} -> Axid at ${made.hostAddress}), quota ${made.quota.cpus} cores by ${made.quota.method}`);
    return made;
  } catch (err) {
    const message = (err as Error).message;
    process.stderr.write(`${message}\n`);
    process.exit(message.startsWith(NETNS_REFUSED) ? 3 : 1);
  }
}

/**
 * The dry run of the namespace mode: the corner made, the load generator
 * started in it, a request of it reaching a server of this process over the
 * veth pair, its CPU read, everything removed. Prints one JSON line.
 */
async function dryRun() {
  const made = corner();
  const cleanup = () => made.teardown();
  process.once('SIGINT', () => (cleanup(), process.exit(130)));
  process.once('SIGTERM', () => (cleanup(), process.exit(143)));
  const server = http.createServer((req, res) => res.end(JSON.stringify({ from: req.socket.remoteAddress })));
  try {
    await new Promise<void>((resolve) => server.listen(0, made.hostAddress, resolve));
    const url = `http://${made.hostAddress}:${(server.address() as AddressInfo).port}`;
    const gen = startLoadgen(made);
    const { status, body } = await gen.ask({ type: 'probe', url }, 'probed');
    const where = {
      // Its own network stack, and the cgroup of the quota (when the quota is a cgroup's).
      separateNetwork: readlinkSync(`/proc/${gen.pid}/ns/net`) !== readlinkSync('/proc/self/ns/net'),
      cgroups: readFileSync(`/proc/${gen.pid}/cgroup`, 'utf8').trim().split('\n'),
    };
    const result = { dryRun: true, namespace: made.name, hostAddress: made.hostAddress, loadgenAddress: made.loadgenAddress, quota: made.quota, probe: { status, body }, loadgen: { pid: gen.pid, ...where } };
    process.stdout.write(`${JSON.stringify(result)}\n`);
    // LOADTEST_DRY_RUN_HOLD_SECONDS: keep it all up that long (to look at it; the tests stop it midway).
    if (HOLD_SECONDS > 0) await sleep(HOLD_SECONDS * 1000);
    await gen.ask({ type: 'stop' }, 'stopped');
    await gen.exited;
  } finally {
    server.close();
    cleanup();
  }
}

/**
 * Samples the window with perf (LOADTEST_PROFILE): one recording per
 * process (Axid's api,worker and gateway, and PostgreSQL's backends of the
 * database as one), each reported by symbol, self time first. Resolves to
 * the reports' paths once written, a little before the window ends.
 */
async function profileWindow(db: pg.Client, node: Record<string, number>, users: number): Promise<string[]> {
  const { rows } = await db.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`);
  const targets: Record<string, string> = { ...Object.fromEntries(Object.entries(node).map(([k, pid]) => [k, String(pid)])), postgres: rows.map((r) => r.pid).join(',') };
  const dir = path.join(repoRoot, 'bench-results');
  mkdirSync(dir, { recursive: true });
  const run = (args: string[]) =>
    new Promise<void>((resolve) => {
      const child = spawn('perf', args, { stdio: 'ignore' });
      child.once('exit', () => resolve());
      child.once('error', () => resolve());
    });
  return Promise.all(
    Object.entries(targets).map(async ([name, pids]) => {
      const data = path.join(os.tmpdir(), `axid-loadtest-${users}-${name}.perf.data`);
      await run(['record', '-q', '-F', '499', '-g', '-p', pids, '-o', data, '--', 'sleep', String(Math.max(5, WINDOW_SECONDS - 5))]);
      const report = path.join(dir, `loadtest-profile-${users}-${name}.txt`);
      await new Promise<void>((resolve) => {
        const child = spawn('bash', ['-c', '{ echo "# self time"; perf report -q --stdio --no-children --sort dso,sym -g none -i "$0" 2>/dev/null | head -60; echo "# JavaScript, with what it calls"; perf report -q --stdio --children --sort sym -g none -i "$0" 2>/dev/null | grep "JS:" | head -60; } > "$1"', data, report], { stdio: 'ignore' });
        child.once('exit', () => resolve());
      });
      rmSync(data, { force: true });
      return report;
    }),
  );
}

/** Whether the server keeps pg_stat_statements (it must be in its shared_preload_libraries; the extension is made here). */
async function statementsAvailable(db: pg.Client): Promise<boolean> {
  try {
    await db.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await db.query('SELECT 1 FROM pg_stat_statements LIMIT 1');
    return true;
  } catch {
    return false;
  }
}

/** The window's statements of this database by total time (pg_stat_statements), written beside loadtest.json. */
async function reportStatements(db: pg.Client, users: number): Promise<string> {
  const { rows } = await db.query<{ ms: number; calls: string; mean_ms: number; rows: string; query: string }>(
    `SELECT round(s.total_exec_time::numeric + s.total_plan_time::numeric, 1)::float AS ms, s.calls, round((s.total_exec_time / s.calls)::numeric, 3)::float AS mean_ms, s.rows,
            regexp_replace(s.query, '\s+', ' ', 'g') AS query
       FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
      WHERE d.datname = current_database() AND s.calls > 0 ORDER BY 1 DESC LIMIT 25`,
  );
  const file = path.join(repoRoot, 'bench-results', `loadtest-statements-${users}.txt`);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, rows.map((r) => `${String(r.ms).padStart(10)} ms ${String(r.calls).padStart(8)} calls ${String(r.mean_ms).padStart(8)} ms/call ${String(r.rows).padStart(8)} rows  ${r.query.slice(0, 400)}`).join('\n') + '\n');
  return file;
}

async function main() {
  if (DRY_RUN) return dryRun();
  const hardStop = setTimeout(() => {
    log('bound reached: stopping');
    void finish().then(() => process.exit(2));
  }, MAX_SECONDS * 1000);
  hardStop.unref();
  const made = NETNS ? corner() : null;
  const id = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'axid-loadtest-'));
  const databaseUrl = `postgres://postgres@127.0.0.1:${PG_PORT}/${DATABASE}`;
  let db: pg.Client | null = null;
  const keyName = `loadtest-${id}`;
  /** What the run added is what was made after this (set once the data set is ready: a data set built now is kept). */
  let since = new Date();
  const results: StepResult[] = [];
  let gen: Loadgen | null = null;
  let posted: string[] = [];

  let finished = false;
  const finish = async () => {
    if (finished) return;
    finished = true;
    if (gen) {
      posted = (await gen.ask({ type: 'stop' }, 'stopped').catch(() => ({ posted: [] as string[] }))).posted;
      gen.child.kill('SIGKILL');
    }
    await stopAll();
    made?.teardown();
    // Remove what the run added: its keys, posts (and their replies), reactions, conversations and joins.
    if (db) {
      await db.query(`DELETE FROM messages WHERE id = ANY($1::uuid[])`, [posted]).catch(() => undefined);
      await db.query(`DELETE FROM reactions WHERE created_at >= $1`, [since]).catch(() => undefined);
      await db.query(`DELETE FROM channels WHERE kind <> 'channel' AND created_at >= $1`, [since]).catch(() => undefined);
      await db.query(`DELETE FROM channel_members WHERE created_at >= $1`, [since]).catch(() => undefined);
      await db.query(`DELETE FROM api_keys WHERE name = $1`, [keyName]).catch(() => undefined);
      await db.end().catch(() => undefined);
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  process.once('SIGINT', () => void finish().then(() => process.exit(130)));
  process.once('SIGTERM', () => void finish().then(() => process.exit(143)));

  try {
    const state = await ensureBigWorkspace(databaseUrl, DATASET, { log });
    log(`data set ${DATABASE} (${DATASET.name}): ${state.builtNow ? 'built' : 'kept'} (${state.buildSeconds.toFixed(0)} s to build)`);
    since = new Date();
    db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    // What autovacuum would have done since the last run (this machine's PostgreSQL runs without it):
    // the rows the last run added and removed, gone; statistics of what it changed, fresh.
    const vacuumStarted = Date.now();
    await db.query('VACUUM (ANALYZE) messages, outbox, reactions, threads, channel_members, api_keys, relay_cursor');
    log(`vacuum and statistics: ${((Date.now() - vacuumStarted) / 1000).toFixed(1)} s`);
    // Axid: the API (with the worker) and the gateway apart, as docs/architecture.md advises with many streams.
    // In the namespace mode they listen on the host's end of the veth pair (and the run reaches them there too).
    const host = made?.hostAddress ?? '127.0.0.1';
    const env = {
      DATABASE_URL: databaseUrl,
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_KEY_PREFIX: `axidload:${id}:`,
      HOST: host,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      RATE_LIMIT_POINTS: '1000000000',
      STREAM_MAX_PER_USER: '1000',
      MIGRATE_ON_START: 'false',
    };
    const apiPort = await freePort();
    const gatewayPort = await freePort();
    const nodeFlags = [...(PROFILE ? ['--perf-basic-prof'] : []), ...CPU_PROF];
    const api = spawnNode('axid-api', 'services/main.ts', { env: { ...env, ROLES: 'api,worker', PORT: String(apiPort) }, nodeFlags });
    const gateway = spawnNode('axid-gateway', 'services/main.ts', { env: { ...env, ROLES: 'gateway', PORT: String(gatewayPort) }, raiseFileLimit: true, nodeFlags });
    const apiUrl = `http://${host}:${apiPort}`;
    const gatewayUrl = `http://${host}:${gatewayPort}`;
    // Two minutes: on a machine shared with other work, starting takes longer than the bench's 40 s.
    await waitReady(api, `${apiUrl}/readyz`, 120_000);
    await waitReady(gateway, `${gatewayUrl}/readyz`, 120_000);
    log(`Axid api,worker ${apiUrl}, gateway ${gatewayUrl}`);

    // The users: the workspace's first MAX_USERS, each with a key of this run and its channels.
    const max = Math.min(MAX_USERS, STEPS.at(-1)!, DATASET.users);
    const { rows } = await db.query<{ id: string; channels: string[] }>(
      `SELECT u.id, array_agg(cm.channel_id) AS channels FROM (SELECT id, seq FROM users ORDER BY seq LIMIT $1) u
         JOIN channel_members cm ON cm.user_id = u.id GROUP BY u.id, u.seq ORDER BY u.seq`,
      [max],
    );
    const allChannels = (await db.query<{ id: string }>(`SELECT id FROM channels WHERE kind = 'channel'`)).rows.map((r) => r.id);
    const ids = rows.map((r) => r.id);
    const keys = await insertKeys(db, ids, keyName);
    const users: UserSpec[] = rows.map((r, i) => ({ id: r.id, key: keys[i]!, channels: r.channels, others: ids.filter((_, j) => j !== i && j % 97 === i % 97).slice(0, 20) }));
    gen = startLoadgen(made);
    await gen.ask({ type: 'start', apiUrl, gatewayUrl, users, allChannels }, 'ready');
    log(`${users.length} users ready in the load generator (pid ${gen.pid}; keys of this run: ${keyName})`);

    let running = 0;
    for (const target of STEPS.filter((n) => n <= max)) {
      log(`step: ${target} users (adding ${target - running} over ${RAMP_SECONDS} s)`);
      const rampOverflows = listenOverflows();
      running = (await gen.ask({ type: 'add', count: target - running, rampSeconds: RAMP_SECONDS }, 'added')).users;
      await sleep(RAMP_SECONDS * 1000);
      // The window: what happens with all the step's users on.
      gen.send({ type: 'window' });
      const waits = new Map<string, number>();
      const cpu0 = { api: cpuMsOf(api.pid), gateway: cpuMsOf(gateway.pid), loadgen: cpuMsOf(gen.pid), self: process.cpuUsage(), machine: machineJiffies(), overflows: listenOverflows(), throttled: made?.throttledMs() ?? null };
      const loadAverageStart = os.loadavg()[0]!;
      const statements = await statementsAvailable(db);
      if (statements) await db.query('SELECT pg_stat_statements_reset()');
      const pg0 = await pgMark(db);
      // Not awaited: it samples the window that starts now.
      const profiling = PROFILE ? profileWindow(db, { api: api.pid, gateway: gateway.pid }, target) : null;
      const t0 = Date.now();
      while (Date.now() - t0 < WINDOW_SECONDS * 1000) {
        await sleep(1000);
        const { rows: activity } = await db.query<{ what: string; n: number }>(
          `SELECT state || coalesce(' / ' || wait_event_type || ':' || wait_event, '') AS what, count(*)::int AS n
             FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle' GROUP BY 1`,
        );
        for (const a of activity) waits.set(a.what, (waits.get(a.what) ?? 0) + a.n);
      }
      const w: WindowReport = (await gen.ask({ type: 'report' }, 'report')).report;
      if (profiling) log(`profiles: ${(await profiling).join(', ')}`);
      // NaN (no answer in the window) crosses the IPC channel as null.
      w.p99Ms ??= NaN;
      for (const a of Object.values(w.actions)) a.p99 ??= NaN;
      const seconds = (Date.now() - t0) / 1000;
      const pgUsed = await pgCost(db, pg0);
      if (statements) log(`statements: ${await reportStatements(db, target)}`);
      const self = process.cpuUsage(cpu0.self);
      const throttled = made?.throttledMs() ?? null;
      const pct = (ms: number) => (ms / (seconds * 1000)) * 100;
      const r: StepResult = {
        users: target,
        seconds,
        requests: w.requests,
        rps: w.requests / seconds,
        avgMs: w.answered ? w.sumMs / w.answered : NaN,
        p99Ms: w.p99Ms,
        errors5xx: w.errors5xx,
        timeouts: w.timeouts,
        errorPercent: w.requests ? ((w.errors5xx + w.timeouts) / w.requests) * 100 : 0,
        eventsPerSecond: w.events / seconds,
        apiCpuPercent: pct(cpuMsOf(api.pid) - cpu0.api),
        gatewayCpuPercent: pct(cpuMsOf(gateway.pid) - cpu0.gateway),
        postgresCpuPercent: pct(pgUsed.cpuMs),
        loadgenCpuPercent: pct(cpuMsOf(gen.pid) - cpu0.loadgen),
        loadgenThrottledPercent: throttled === null || cpu0.throttled === null ? null : pct(throttled - cpu0.throttled),
        runnerCpuPercent: pct((self.user + self.system) / 1000),
        loadgenLoopDelayP99Ms: w.loopDelayP99Ms,
        actions: w.actions,
        postgresWaits: Object.fromEntries([...waits].sort((a, b) => b[1] - a[1])),
        loadAverageStart,
        loadAverage: os.loadavg()[0]!,
        listenOverflows: { ramp: cpu0.overflows - rampOverflows, window: listenOverflows() - cpu0.overflows },
        machineCpuPercent: (((machineJiffies().busy - cpu0.machine.busy) / TICKS_PER_SECOND) * 100) / seconds,
        healthy: true,
        broke: [],
      };
      if (!(r.avgMs <= THRESHOLDS.avgMs)) r.broke.push(`average ${r.avgMs.toFixed(1)} ms > ${THRESHOLDS.avgMs} ms`);
      if (!(r.p99Ms <= THRESHOLDS.p99Ms)) r.broke.push(`p99 ${r.p99Ms.toFixed(0)} ms > ${THRESHOLDS.p99Ms} ms`);
      if (r.errorPercent > THRESHOLDS.errorPercent) r.broke.push(`5xx and timeouts ${r.errorPercent.toFixed(3)} % > ${THRESHOLDS.errorPercent} %`);
      r.healthy = r.broke.length === 0;
      results.push(r);
      const others = r.machineCpuPercent - r.apiCpuPercent - r.gatewayCpuPercent - r.postgresCpuPercent - r.loadgenCpuPercent - r.runnerCpuPercent;
      log(
        `${target} users: ${r.rps.toFixed(1)} req/s, avg ${r.avgMs.toFixed(1)} ms, p99 ${r.p99Ms.toFixed(0)} ms, 5xx ${r.errors5xx}, timeouts ${r.timeouts}, ` +
          `${r.eventsPerSecond.toFixed(0)} events/s; CPU api ${r.apiCpuPercent.toFixed(0)} %, gateway ${r.gatewayCpuPercent.toFixed(0)} %, ` +
          `postgres ${r.postgresCpuPercent.toFixed(0)} %, load generator ${r.loadgenCpuPercent.toFixed(0)} %` +
          (r.loadgenThrottledPercent === null ? '' : ` (held back by its quota ${r.loadgenThrottledPercent.toFixed(0)} %)`) +
          ` (loop delay p99 ${r.loadgenLoopDelayP99Ms.toFixed(0)} ms), this runner ${r.runnerCpuPercent.toFixed(0)} %, everything else on the machine ${others.toFixed(0)} %; ` +
          `machine load ${r.loadAverageStart.toFixed(1)} -> ${r.loadAverage.toFixed(1)}, listen queue overflows ${r.listenOverflows.ramp} in the ramp, ${r.listenOverflows.window} in the window` +
          (r.healthy ? '' : `: BROKE (${r.broke.join('; ')})`),
      );
      if (!r.healthy) {
        const worst = Object.entries(r.actions).sort((a, b) => b[1].bad - a[1].bad || b[1].p99 - a[1].p99).slice(0, 5);
        log(`what broke: ${worst.map(([k, v]) => `${k} ${v.bad}/${v.n} failed, p99 ${v.p99.toFixed(0)} ms`).join('; ')}`);
        log(`postgres sessions (state / wait, summed per second): ${JSON.stringify(r.postgresWaits)}`);
        break;
      }
    }
    const lastHealthy = results.filter((r) => r.healthy).at(-1)?.users ?? 0;
    const mode = made ? `load generator in namespace ${made.name}, ${made.quota.cpus} cores by ${made.quota.method}` : 'load generator on loopback, no quota';
    const report = {
      ranAt: new Date(started).toISOString(),
      cores: os.availableParallelism(),
      database: DATABASE,
      dataset: DATASET.name,
      mode,
      thresholds: THRESHOLDS,
      steps: results,
      lastHealthyUsers: lastHealthy,
    };
    mkdirSync(path.join(repoRoot, 'bench-results'), { recursive: true });
    writeFileSync(path.join(repoRoot, 'bench-results/loadtest.json'), JSON.stringify(report, null, 2) + '\n');
    const lines = [
      '| users | req/s | avg ms | p99 ms | 5xx | timeouts | events/s received | CPU % api,worker | CPU % gateway | CPU % postgres (this DB) | CPU % load generator | CPU % machine (all) | load average (start -> end) | healthy |',
      '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
      ...results.map(
        (r) =>
          `| ${r.users} | ${r.rps.toFixed(1)} | ${r.avgMs.toFixed(1)} | ${r.p99Ms.toFixed(0)} | ${r.errors5xx} | ${r.timeouts} | ${r.eventsPerSecond.toFixed(0)} | ${r.apiCpuPercent.toFixed(0)} | ${r.gatewayCpuPercent.toFixed(0)} | ${r.postgresCpuPercent.toFixed(0)} | ${r.loadgenCpuPercent.toFixed(0)}${r.loadgenThrottledPercent === null ? '' : ` (held back ${r.loadgenThrottledPercent.toFixed(0)})`} | ${r.machineCpuPercent.toFixed(0)} | ${r.loadAverageStart.toFixed(1)} -> ${r.loadAverage.toFixed(1)} | ${r.healthy ? 'yes' : `no: ${r.broke.join('; ')}`} |`,
      ),
    ];
    process.stdout.write(`\n${lines.join('\n')}\n\nlast healthy: ${lastHealthy} users on ${report.cores} cores (${mode}; data set ${DATASET.name})\n`);
  } finally {
    clearTimeout(hardStop);
    await finish();
  }
}
main().then(
  () => process.exit(0),
  (err) => {
    log(`failed: ${(err as Error).stack ?? err}`);
    process.exit(1);
  },
);
