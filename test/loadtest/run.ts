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
// Everything runs on this machine, loopback only: Axid (an api,worker process
// and a gateway process), PostgreSQL, Redis and this load generator. Bounded:
// LOADTEST_MAX_USERS users, LOADTEST_MAX_SECONDS in all; what it added to the
// database (keys, posts, reactions, conversations, joins) is removed at the end.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pg from 'pg';
import { generateApiKey } from '../../shared/auth.js';
import { freePort } from '../../shared/embedded.js';
import { DATASET_SIZES } from '../bench/dataset/big-workspace.js';
import { ensureBigWorkspace } from '../bench/dataset/ensure.js';
import { cpuMsOf, repoRoot, spawnNode, stopAll, waitReady } from '../bench/lib/proc.js';
import { pgCost, pgMark } from '../bench/lib/pgcost.js';
import { Histogram } from '../bench/lib/stats.js';

const int = (name: string, fallback: number) => (process.env[name] && /^\d+$/.test(process.env[name]!) ? Number(process.env[name]) : fallback);
const STEPS = (process.env.LOADTEST_STEPS ?? '250,500,1000,1500,2000,3000,4000,5000,6000,8000,10000').split(',').map(Number);
const MAX_USERS = int('LOADTEST_MAX_USERS', 10_000);
const MAX_SECONDS = int('LOADTEST_MAX_SECONDS', 1_500);
/** Each step: users are added over RAMP, then measured over WINDOW (Mattermost's queries use 1-minute windows). */
const RAMP_SECONDS = int('LOADTEST_RAMP_SECONDS', 15);
const WINDOW_SECONDS = int('LOADTEST_WINDOW_SECONDS', 60);
const REQUEST_TIMEOUT_MS = 10_000;
const DATABASE = process.env.LOADTEST_DATABASE ?? 'axid_bench_10m';

/** Mattermost's health thresholds (config/coordinator.sample.json, MonitorConfig.Queries). */
const THRESHOLDS = { avgMs: 100, p99Ms: 2_000, errorPercent: 0.025 };

// Mattermost load-test-ng, loadtest/control/simulcontroller/controller.go,
// getActionList(): each action's relative frequency. A user picks one action
// by these weights, runs it, then idles (PickIdleTimeMs: uniform in
// [MinIdleTimeMs, 2 × AvgIdleTimeMs − MinIdleTimeMs), with the defaults of
// simulcontroller/config.go: MinIdleTimeMs 1000, AvgIdleTimeMs 20000) and
// picks again. PercentReplies 0.18 (config.go default): the share of posts
// that are replies. Actions Axid has no counterpart for (custom status,
// sidebar categories, thread follow/read state, surveys, reminders, acks,
// search until the search endpoint exists) are drawn with their weight and do nothing,
// so the rate of the others stays Mattermost's.
type ActionName = keyof typeof ACTION_WEIGHTS;
const ACTION_WEIGHTS = {
  surveyConnectAPI: 0.01,
  SubmitPartialResponse: 0.05,
  SubmitCompleteResponse: 0.05,
  SwitchChannel: 6.5219,
  SwitchTeam: 0.0001,
  ScrollChannel: 1.9873,
  OpenDirectOrGroupChannel: 0.9843,
  UnreadCheck: 1,
  CreatePost: 1,
  JoinChannel: 0.0049,
  SearchChannels: 0.015,
  AddReaction: 0.1306,
  FullReload: 0.0008,
  CreateDirectChannel: 0.0055,
  LogoutLogin: 0.0006,
  SearchUsers: 0.032,
  SearchPosts: 0.0218,
  CreatePostReminder: 0.0005,
  EditPost: 0.04,
  DeletePost: 0.0049,
  UpdateCustomStatus: 0.0028,
  RemoveCustomStatus: 0.0026,
  CreateSidebarCategory: 0.0001,
  UpdateSidebarCategory: 0.004,
  SearchGroupChannels: 0.0204,
  CreateGroupChannel: 0.0029,
  CreatePrivateChannel: 0.0002,
  CreatePublicChannel: 0.0001,
  ViewGlobalThreads: 0.6023,
  FollowThread: 0.0005,
  UnfollowThread: 0.005,
  ViewThread: 0.2841,
  MarkAllThreadsInTeamAsRead: 0.0001,
  UpdateThreadRead: 0.3236,
  CreateAclPost: 0.0001,
  AckToPost: 0.0001,
  CreatePersistentNotificationPost: 0.0001,
  ClickUserProfile: 0.03,
  ClickPermalink: 0.3,
  ReconnectWebSocket: 0.144,
  GenerateUserReport: 0.0001,
};
const MIN_IDLE_MS = 1_000;
const AVG_IDLE_MS = 20_000;
const PERCENT_REPLIES = 0.18;
const idleMs = () => MIN_IDLE_MS + Math.floor(Math.random() * (AVG_IDLE_MS * 2 - MIN_IDLE_MS * 2));

const started = Date.now();
const log = (msg: string) => process.stderr.write(`[loadtest ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${msg}\n`);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)]!;

// ---------------------------------------------------------------- measuring

class Window {
  latency = new Histogram();
  sumMs = 0;
  requests = 0;
  errors5xx = 0;
  timeouts = 0;
  other = 0;
  byAction = new Map<string, { n: number; bad: number; latency: Histogram }>();
  events = 0;
  /** Postgres backends of the data set's database by what they were doing (sampled every second). */
  waits = new Map<string, number>();
  record(action: string, ms: number, status: number) {
    this.requests++;
    const a = this.byAction.get(action) ?? { n: 0, bad: 0, latency: new Histogram() };
    a.n++;
    if (status === -1 || status === 0 || status >= 500) a.bad++;
    else a.latency.record(ms);
    this.byAction.set(action, a);
    if (status === -1) this.timeouts++;
    else if (status >= 500 || status === 0) this.errors5xx++;
    else if (status >= 400) this.other++;
    if (status > 0) {
      this.latency.record(ms);
      this.sumMs += ms;
    }
  }
}
let window = new Window();

let apiUrl = '';
let gatewayUrl = '';

async function request(action: string, key: string, method: string, pathname: string, body?: unknown): Promise<{ status: number; json: any }> {
  const t = performance.now();
  let status = 0;
  let json: any = null;
  try {
    const res = await fetch(`${apiUrl}/api/v1${pathname}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    status = res.status;
    const text = await res.text();
    json = text.startsWith('{') ? JSON.parse(text) : null;
  } catch (err) {
    status = (err as Error).name === 'TimeoutError' ? -1 : 0;
  }
  window.record(action, performance.now() - t, status);
  return { status, json };
}

// ---------------------------------------------------------------- a user

interface Msg {
  id: string;
  thread?: unknown;
}

class User {
  stream: http.ClientRequest | null = null;
  stopped = false;
  current: string;
  page: Msg[] = [];
  cursor: string | null = null;
  mine: { channel: string; id: string }[] = [];

  constructor(
    readonly id: string,
    readonly key: string,
    readonly channels: string[],
    readonly others: string[],
  ) {
    this.current = pick(channels);
  }

  /** Opens the event stream; the time to its init frame counts as a request ("stream open"). */
  openStream(): Promise<void> {
    return new Promise((resolve) => {
      const t = performance.now();
      let done = false;
      const finish = (status: number) => {
        if (done) return;
        done = true;
        window.record('stream open', performance.now() - t, status);
        resolve();
      };
      const timer = setTimeout(() => finish(-1), REQUEST_TIMEOUT_MS);
      const req = http.get(`${gatewayUrl}/api/v1/stream`, { headers: { authorization: `Bearer ${this.key}` }, agent: false }, (res) => {
        if (res.statusCode !== 200) {
          clearTimeout(timer);
          res.resume();
          return finish(res.statusCode ?? 0);
        }
        res.on('data', (chunk: Buffer) => {
          if (!done && chunk.includes('event: init')) {
            clearTimeout(timer);
            finish(200);
          }
          // Deliveries: one "event:" line per frame; counted, not parsed.
          let at = chunk.indexOf('event: ');
          while (at >= 0) {
            window.events++;
            at = chunk.indexOf('event: ', at + 7);
          }
        });
        res.on('close', () => {
          if (this.stream === req) this.stream = null;
        });
      });
      req.on('error', () => {
        clearTimeout(timer);
        finish(0);
      });
      this.stream = req;
    });
  }

  closeStream() {
    const s = this.stream;
    this.stream = null;
    s?.destroy();
  }

  async start() {
    await this.openStream();
    await this.switchChannel();
    while (!this.stopped) {
      await sleep(idleMs());
      if (this.stopped) break;
      await this.act(chooseAction());
    }
  }

  stop() {
    this.stopped = true;
    this.closeStream();
  }

  private async switchChannel() {
    this.current = pick(this.channels);
    const r = await request('SwitchChannel', this.key, 'GET', `/channels/${this.current}/messages?limit=50`);
    if (r.status === 200) {
      this.page = r.json.data;
      this.cursor = r.json.pagination?.next_cursor ?? null;
    }
  }

  private someMessage(): Msg | undefined {
    return this.page.length ? pick(this.page) : undefined;
  }

  async act(name: ActionName) {
    const k = this.key;
    const c = this.current;
    switch (name) {
      case 'SwitchChannel':
        return this.switchChannel();
      case 'ScrollChannel': {
        if (!this.cursor) return this.switchChannel();
        const r = await request(name, k, 'GET', `/channels/${c}/messages?limit=50&cursor=${this.cursor}`);
        if (r.status === 200) {
          this.page = r.json.data;
          this.cursor = r.json.pagination?.next_cursor ?? null;
        }
        return;
      }
      case 'OpenDirectOrGroupChannel':
      case 'SearchGroupChannels':
        await request(name, k, 'GET', '/dms?limit=50');
        return;
      case 'UnreadCheck':
      case 'SearchChannels':
        await request(name, k, 'GET', '/channels?limit=100');
        return;
      case 'CreatePost': {
        const root = Math.random() < PERCENT_REPLIES ? this.someMessage() : undefined;
        const r = await request(name, k, 'POST', `/channels/${c}/messages`, {
          content: `loadtest ${randomBytes(6).toString('hex')} the quick brown fox`,
          ...(root ? { thread_id: root.id } : {}),
        });
        if (r.status === 201) {
          this.mine.push({ channel: c, id: r.json.data.id });
          posted.push(r.json.data.id);
        }
        return;
      }
      case 'JoinChannel': {
        const target = pick(allChannels);
        const r = await request(name, k, 'POST', `/channels/${target}/members`, { user_id: this.id });
        if (r.status === 201) this.channels.push(target);
        return;
      }
      case 'AddReaction': {
        const m = this.someMessage();
        if (m) await request(name, k, 'POST', `/channels/${c}/messages/${m.id}/reactions`, { emoji: pick(['+1', 'tada', 'eyes', 'rocket']) });
        return;
      }
      case 'FullReload':
        this.closeStream();
        await this.openStream();
        await request(name, k, 'GET', '/channels?limit=100');
        return this.switchChannel();
      case 'LogoutLogin':
      case 'ReconnectWebSocket':
        this.closeStream();
        return this.openStream();
      case 'CreateDirectChannel':
        await request(name, k, 'POST', '/dms', { user_ids: [pick(this.others)] });
        return;
      case 'CreateGroupChannel':
        await request(name, k, 'POST', '/dms', { user_ids: [pick(this.others), pick(this.others)] });
        return;
      case 'SearchUsers':
        await request(name, k, 'GET', '/users?limit=50');
        return;
      case 'ClickUserProfile':
        await request(name, k, 'GET', `/users/${pick(this.others)}`);
        return;
      case 'ClickPermalink': {
        const m = this.someMessage();
        if (m) await request(name, k, 'GET', `/channels/${c}/messages/${m.id}`);
        return;
      }
      case 'ViewThread':
      case 'ViewGlobalThreads': {
        const withThread = this.page.filter((m) => m.thread);
        const m = withThread.length ? pick(withThread) : this.someMessage();
        if (m) await request(name, k, 'GET', `/channels/${c}/messages?thread_id=${m.id}&limit=50`);
        return;
      }
      case 'EditPost': {
        const m = this.mine.at(-1);
        if (m) await request(name, k, 'PATCH', `/channels/${m.channel}/messages/${m.id}`, { content: 'loadtest edited' });
        return;
      }
      case 'DeletePost': {
        const m = this.mine.pop();
        if (m) await request(name, k, 'DELETE', `/channels/${m.channel}/messages/${m.id}`);
        return;
      }
      default:
        // No Axid counterpart: drawn with its weight, does nothing.
        return;
    }
  }
}

const WEIGHTS = Object.entries(ACTION_WEIGHTS) as [ActionName, number][];
const TOTAL_WEIGHT = WEIGHTS.reduce((n, [, w]) => n + w, 0);
function chooseAction(): ActionName {
  let x = Math.random() * TOTAL_WEIGHT;
  for (const [name, w] of WEIGHTS) if ((x -= w) < 0) return name;
  return 'SwitchChannel';
}

const posted: string[] = [];
let allChannels: string[] = [];

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
  loadgenCpuPercent: number;
  loadgenLoopDelayP99Ms: number;
  /** Per action: requests, failed (5xx, timeouts), p99 ms. */
  actions: Record<string, { n: number; bad: number; p99: number }>;
  /** Postgres sessions of the database by state and wait event, summed over the window's 1-second samples. */
  postgresWaits: Record<string, number>;
  /** The machine's 1-minute load average at the window's end (other work shares these cores). */
  loadAverage: number;
  healthy: boolean;
  broke: string[];
}

async function main() {
  const hardStop = setTimeout(() => {
    log('bound reached: stopping');
    void finish().then(() => process.exit(2));
  }, MAX_SECONDS * 1000);
  hardStop.unref();
  const id = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'axid-loadtest-'));
  const databaseUrl = `postgres://postgres@127.0.0.1:5432/${DATABASE}`;
  const state = await ensureBigWorkspace(databaseUrl, DATASET_SIZES.full, { log });
  log(`data set ${DATABASE}: ${state.builtNow ? 'built' : 'kept'} (${state.buildSeconds.toFixed(0)} s to build)`);
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  const keyName = `loadtest-${id}`;
  const since = new Date();
  const results: StepResult[] = [];
  let users: User[] = [];

  const finish = async () => {
    for (const u of users) u.stop();
    await stopAll();
    // Remove what the run added: its keys, posts (and their replies), reactions, conversations and joins.
    await db.query(`DELETE FROM messages WHERE id = ANY($1::uuid[])`, [posted]).catch(() => undefined);
    await db.query(`DELETE FROM reactions WHERE created_at >= $1`, [since]).catch(() => undefined);
    await db.query(`DELETE FROM channels WHERE kind <> 'channel' AND created_at >= $1`, [since]).catch(() => undefined);
    await db.query(`DELETE FROM channel_members WHERE created_at >= $1`, [since]).catch(() => undefined);
    await db.query(`DELETE FROM api_keys WHERE name = $1`, [keyName]).catch(() => undefined);
    await db.end().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  };
  process.once('SIGINT', () => void finish().then(() => process.exit(130)));

  try {
    // Axid: the API (with the worker) and the gateway apart, as docs/architecture.md advises with many streams.
    const env = {
      DATABASE_URL: databaseUrl,
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_KEY_PREFIX: `axidload:${id}:`,
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      RATE_LIMIT_POINTS: '1000000000',
      STREAM_MAX_PER_USER: '1000',
      MIGRATE_ON_START: 'false',
    };
    const apiPort = await freePort();
    const gatewayPort = await freePort();
    const api = spawnNode('axid-api', 'services/main.ts', { env: { ...env, ROLES: 'api,worker', PORT: String(apiPort) } });
    const gateway = spawnNode('axid-gateway', 'services/main.ts', { env: { ...env, ROLES: 'gateway', PORT: String(gatewayPort) }, raiseFileLimit: true });
    apiUrl = `http://127.0.0.1:${apiPort}`;
    gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
    await waitReady(api, `${apiUrl}/readyz`);
    await waitReady(gateway, `${gatewayUrl}/readyz`);
    log(`Axid api,worker ${apiUrl}, gateway ${gatewayUrl}`);

    // The users: the workspace's first MAX_USERS, each with a key of this run and its channels.
    const max = Math.min(MAX_USERS, STEPS.at(-1)!);
    const { rows } = await db.query<{ id: string; channels: string[] }>(
      `SELECT u.id, array_agg(cm.channel_id) AS channels FROM (SELECT id, seq FROM users ORDER BY seq LIMIT $1) u
         JOIN channel_members cm ON cm.user_id = u.id GROUP BY u.id, u.seq ORDER BY u.seq`,
      [max],
    );
    allChannels = (await db.query<{ id: string }>(`SELECT id FROM channels WHERE kind = 'channel'`)).rows.map((r) => r.id);
    const ids = rows.map((r) => r.id);
    const keys = rows.map(() => generateApiKey());
    await db.query(
      `INSERT INTO api_keys (workspace_id, user_id, name, prefix, key_hash)
       SELECT u.workspace_id, k.user_id, $1, k.prefix, k.hash FROM unnest($2::uuid[], $3::text[], $4::text[]) AS k(user_id, prefix, hash) JOIN users u ON u.id = k.user_id`,
      [keyName, ids, keys.map((k) => k.prefix), keys.map((k) => k.hash)],
    );
    const pool = rows.map((r, i) => new User(r.id, keys[i]!.key, r.channels, ids.filter((_, j) => j !== i && j % 97 === i % 97).slice(0, 20)));
    log(`${pool.length} users ready (keys of this run: ${keyName})`);

    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    for (const target of STEPS.filter((n) => n <= max)) {
      const adding = pool.slice(users.length, target);
      log(`step: ${target} users (adding ${adding.length} over ${RAMP_SECONDS} s)`);
      for (let i = 0; i < adding.length; i++) {
        const u = adding[i]!;
        setTimeout(() => void u.start(), (i / adding.length) * RAMP_SECONDS * 1000);
      }
      users = users.concat(adding);
      await sleep(RAMP_SECONDS * 1000);
      // The window: what happens with all the step's users on.
      window = new Window();
      loop.reset();
      const cpu0 = { api: cpuMsOf(api.pid), gateway: cpuMsOf(gateway.pid), self: process.cpuUsage() };
      const pg0 = await pgMark(db);
      const t0 = Date.now();
      while (Date.now() - t0 < WINDOW_SECONDS * 1000) {
        await sleep(1000);
        const { rows: activity } = await db.query<{ what: string; n: number }>(
          `SELECT state || coalesce(' / ' || wait_event_type || ':' || wait_event, '') AS what, count(*)::int AS n
             FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle' GROUP BY 1`,
        );
        for (const a of activity) window.waits.set(a.what, (window.waits.get(a.what) ?? 0) + a.n);
      }
      const w = window;
      const seconds = (Date.now() - t0) / 1000;
      const pgUsed = await pgCost(db, pg0);
      const self = process.cpuUsage(cpu0.self);
      const pct = (ms: number) => (ms / (seconds * 1000)) * 100;
      const answered = w.latency.count;
      const r: StepResult = {
        users: target,
        seconds,
        requests: w.requests,
        rps: w.requests / seconds,
        avgMs: answered ? w.sumMs / answered : NaN,
        p99Ms: w.latency.percentile(99),
        errors5xx: w.errors5xx,
        timeouts: w.timeouts,
        errorPercent: w.requests ? ((w.errors5xx + w.timeouts) / w.requests) * 100 : 0,
        eventsPerSecond: w.events / seconds,
        apiCpuPercent: pct(cpuMsOf(api.pid) - cpu0.api),
        gatewayCpuPercent: pct(cpuMsOf(gateway.pid) - cpu0.gateway),
        postgresCpuPercent: pct(pgUsed.cpuMs),
        loadgenCpuPercent: pct((self.user + self.system) / 1000),
        loadgenLoopDelayP99Ms: loop.percentile(99) / 1e6,
        actions: Object.fromEntries([...w.byAction].map(([k, v]) => [k, { n: v.n, bad: v.bad, p99: v.latency.percentile(99) }])),
        postgresWaits: Object.fromEntries([...w.waits].sort((a, b) => b[1] - a[1])),
        loadAverage: os.loadavg()[0]!,
        healthy: true,
        broke: [],
      };
      if (!(r.avgMs <= THRESHOLDS.avgMs)) r.broke.push(`average ${r.avgMs.toFixed(1)} ms > ${THRESHOLDS.avgMs} ms`);
      if (!(r.p99Ms <= THRESHOLDS.p99Ms)) r.broke.push(`p99 ${r.p99Ms.toFixed(0)} ms > ${THRESHOLDS.p99Ms} ms`);
      if (r.errorPercent > THRESHOLDS.errorPercent) r.broke.push(`5xx and timeouts ${r.errorPercent.toFixed(3)} % > ${THRESHOLDS.errorPercent} %`);
      r.healthy = r.broke.length === 0;
      results.push(r);
      log(
        `${target} users: ${r.rps.toFixed(1)} req/s, avg ${r.avgMs.toFixed(1)} ms, p99 ${r.p99Ms.toFixed(0)} ms, 5xx ${r.errors5xx}, timeouts ${r.timeouts}, ` +
          `${r.eventsPerSecond.toFixed(0)} events/s; CPU api ${r.apiCpuPercent.toFixed(0)} %, gateway ${r.gatewayCpuPercent.toFixed(0)} %, ` +
          `postgres ${r.postgresCpuPercent.toFixed(0)} %, load generator ${r.loadgenCpuPercent.toFixed(0)} % (loop delay p99 ${r.loadgenLoopDelayP99Ms.toFixed(0)} ms); machine load ${r.loadAverage.toFixed(1)}` +
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
    const report = { ranAt: new Date(started).toISOString(), cores: os.availableParallelism(), database: DATABASE, thresholds: THRESHOLDS, steps: results, lastHealthyUsers: lastHealthy };
    mkdirSync(path.join(repoRoot, 'bench-results'), { recursive: true });
    writeFileSync(path.join(repoRoot, 'bench-results/loadtest.json'), JSON.stringify(report, null, 2) + '\n');
    const lines = [
      '| users | req/s | avg ms | p99 ms | 5xx | timeouts | events/s received | CPU % api,worker | CPU % gateway | CPU % postgres (this DB) | CPU % load generator | load average | healthy |',
      '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
      ...results.map(
        (r) =>
          `| ${r.users} | ${r.rps.toFixed(1)} | ${r.avgMs.toFixed(1)} | ${r.p99Ms.toFixed(0)} | ${r.errors5xx} | ${r.timeouts} | ${r.eventsPerSecond.toFixed(0)} | ${r.apiCpuPercent.toFixed(0)} | ${r.gatewayCpuPercent.toFixed(0)} | ${r.postgresCpuPercent.toFixed(0)} | ${r.loadgenCpuPercent.toFixed(0)} | ${r.loadAverage.toFixed(1)} | ${r.healthy ? 'yes' : `no: ${r.broke.join('; ')}`} |`,
      ),
    ];
    process.stdout.write(`\n${lines.join('\n')}\n\nlast healthy: ${lastHealthy} users on ${report.cores} cores (everything on this machine)\n`);
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
