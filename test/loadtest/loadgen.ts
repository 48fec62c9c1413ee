// The load generator of `npm run loadtest` (test/loadtest/run.ts starts it):
// the simulated users, each holding an event stream open and acting as
// Mattermost's load-test-ng "simulative" controller does (its actions, their
// weights and its idle times: ACTION_WEIGHTS below, with the source). A
// process of its own, so that the run counts its CPU apart from Axid's and
// its own, and can start it in a network namespace under a CPU quota
// (LOADTEST_NETNS, netns.ts). Driven over the IPC channel: `start` (the users
// and Axid's addresses), `add` (users to start, over a ramp), `window` (reset
// the counters), `report` (the window's figures), `stop` (answers with the
// ids of the messages it posted, then exits).
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { gunzipSync } from 'node:zlib';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Histogram } from '../bench/lib/stats.js';

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

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)]!;
const REQUEST_TIMEOUT_MS = 10_000;
/** Every stream's reads land here (net's `onread`): no buffer per read. */
const READ_BUFFER = Buffer.alloc(64 * 1024);
const MARKER = Buffer.from('event: ');
const INIT = Buffer.from('event: init');

/**
 * LOADTEST_STREAM_READ_MS (default 1000; 0: every event as it arrives): how
 * often a stream's socket is read. After each read the socket is paused and
 * read again this long after, so one read takes every frame that came
 * meanwhile from the kernel's receive queue, instead of a wake-up and a read
 * per frame. The gateway writes every frame as before; what it saves is the
 * load generator's CPU, which shares the box (docs/bench.md, "The loadtest's
 * own cost"). Frames are counted when read, so a window's count lags by at
 * most this long.
 */
const STREAM_READ_MS = /^\d+$/.test(process.env.LOADTEST_STREAM_READ_MS ?? '') ? Number(process.env.LOADTEST_STREAM_READ_MS) : 1000;
/** Paused streams, oldest pause first, each read again once STREAM_READ_MS has passed. */
const pausedStreams: { socket: net.Socket; at: number }[] = [];
let pausedHead = 0;
if (STREAM_READ_MS > 0) {
  setInterval(() => {
    const due = performance.now() - STREAM_READ_MS;
    while (pausedHead < pausedStreams.length && pausedStreams[pausedHead]!.at <= due) {
      const { socket } = pausedStreams[pausedHead++]!;
      if (!socket.destroyed) socket.resume();
    }
    if (pausedHead > 4096 && pausedHead * 2 > pausedStreams.length) {
      pausedStreams.splice(0, pausedHead);
      pausedHead = 0;
    }
  }, Math.min(50, STREAM_READ_MS)).unref();
}

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
let gateway = { host: '127.0.0.1', port: 0 };

// Requests go through node:http on kept-alive connections, streams over raw
// sockets (below): the load generator shares the box with what it measures,
// and fetch (undici) and the HTTP client's parsing of every event cost it
// several times what these do (docs/bench.md, "The loadtest's own cost").
const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });

function request(action: string, key: string, method: string, pathname: string, body?: unknown): Promise<{ status: number; json: any }> {
  const t = performance.now();
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve) => {
    let settled = false;
    const done = (status: number, json: any) => {
      if (settled) return;
      settled = true;
      window.record(action, performance.now() - t, status);
      resolve({ status, json });
    };
    const req = http.request(
      `${apiUrl}/api/v1${pathname}`,
      {
        method,
        agent,
        timeout: REQUEST_TIMEOUT_MS,
        // gzip, as Mattermost's load generator asks (Go's HTTP client does by default), unpacked here as there.
        headers: { authorization: `Bearer ${key}`, 'accept-encoding': 'gzip', ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const raw = Buffer.concat(chunks);
          let json: any = null;
          try {
            const text = (res.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString();
            json = text.startsWith('{') ? JSON.parse(text) : null;
          } catch {
            json = null;
          }
          done(res.statusCode ?? 0, json);
        });
        res.on('error', () => done(0, null));
      },
    );
    req.on('timeout', () => {
      done(-1, null);
      req.destroy();
    });
    req.on('error', () => done(0, null));
    req.end(payload);
  });
}

// ---------------------------------------------------------------- a user

interface Msg {
  id: string;
  thread?: unknown;
}

class User {
  stream: net.Socket | null = null;
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

  /**
   * Opens the event stream on a socket of its own, written and read raw into
   * one buffer every stream shares (read callbacks run one at a time): the
   * status line is checked, then frames are counted by their "event: " lines
   * (a marker split between two reads is counted once the rest arrives),
   * never parsed, never copied. The time to its init frame counts as a
   * request ("stream open").
   */
  openStream(): Promise<void> {
    return new Promise((resolve) => {
      const t = performance.now();
      let done = false;
      let head = true;
      /** How many bytes of "event: " the last read ended with. */
      let partial = 0;
      const finish = (status: number) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        window.record('stream open', performance.now() - t, status);
        resolve();
      };
      const timer = setTimeout(() => finish(-1), REQUEST_TIMEOUT_MS);
      const socket = net.connect({
        host: gateway.host,
        port: gateway.port,
        noDelay: true,
        onread: {
          buffer: READ_BUFFER,
          callback: (n: number, buf: Uint8Array) => {
            const chunk = Buffer.from(buf.buffer, buf.byteOffset, n);
            if (head) {
              head = false;
              const status = Number(chunk.toString('latin1', 9, 12));
              if (status !== 200) {
                socket.destroy();
                finish(status || 0);
                return false;
              }
            }
            if (!done && chunk.includes(INIT)) finish(200);
            // Deliveries: one "event:" line per frame; counted, not parsed.
            if (partial > 0 && chunk.subarray(0, MARKER.length - partial).equals(MARKER.subarray(partial))) window.events++;
            let at = chunk.indexOf(MARKER);
            while (at >= 0) {
              window.events++;
              at = chunk.indexOf(MARKER, at + MARKER.length);
            }
            partial = 0;
            for (let k = MARKER.length - 1; k > 0; k--) {
              if (n >= k && chunk.subarray(n - k).equals(MARKER.subarray(0, k))) {
                partial = k;
                break;
              }
            }
            if (STREAM_READ_MS > 0 && done) {
              socket.pause();
              pausedStreams.push({ socket, at: performance.now() });
            }
            return true;
          },
        },
      });
      socket.write(`GET /api/v1/stream HTTP/1.1\r\nhost: ${gateway.host}\r\nauthorization: Bearer ${this.key}\r\naccept: text/event-stream\r\n\r\n`);
      socket.on('close', () => {
        if (this.stream === socket) this.stream = null;
        finish(0);
      });
      socket.on('error', () => finish(0));
      this.stream = socket;
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


// ---------------------------------------------------------------- the IPC driver

export interface UserSpec {
  id: string;
  key: string;
  channels: string[];
  others: string[];
}
export type ToLoadgen =
  | { type: 'start'; apiUrl: string; gatewayUrl: string; users: UserSpec[]; allChannels: string[] }
  | { type: 'add'; count: number; rampSeconds: number }
  | { type: 'window' }
  | { type: 'report' }
  | { type: 'stop' }
  /** The dry run's: one request to `url` (a server of the run's, across the veth pair in the namespace mode). */
  | { type: 'probe'; url: string };
/** A window's figures, as the load generator measured them. */
export interface WindowReport {
  requests: number;
  answered: number;
  sumMs: number;
  p99Ms: number;
  errors5xx: number;
  timeouts: number;
  events: number;
  loopDelayP99Ms: number;
  actions: Record<string, { n: number; bad: number; p99: number }>;
}
export type FromLoadgen =
  | { type: 'ready' }
  | { type: 'report'; report: WindowReport }
  | { type: 'stopped'; posted: string[] }
  | { type: 'added'; users: number }
  | { type: 'probed'; status: number; body: string };

if (process.send) {
  const send = (m: FromLoadgen) => process.send!(m);
  let pool: User[] = [];
  let running: User[] = [];
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  process.on('message', (m: ToLoadgen) => {
    if (m.type === 'start') {
      apiUrl = m.apiUrl;
      const g = new URL(m.gatewayUrl);
      gateway = { host: g.hostname, port: Number(g.port) };
      allChannels = m.allChannels;
      pool = m.users.map((u) => new User(u.id, u.key, u.channels, u.others));
      send({ type: 'ready' });
    } else if (m.type === 'add') {
      const adding = pool.slice(running.length, running.length + m.count);
      adding.forEach((u, i) => setTimeout(() => void u.start(), (i / adding.length) * m.rampSeconds * 1000));
      running = running.concat(adding);
      send({ type: 'added', users: running.length });
    } else if (m.type === 'window') {
      window = new Window();
      loop.reset();
    } else if (m.type === 'report') {
      const w = window;
      send({
        type: 'report',
        report: {
          requests: w.requests,
          answered: w.latency.count,
          sumMs: w.sumMs,
          p99Ms: w.latency.percentile(99),
          errors5xx: w.errors5xx,
          timeouts: w.timeouts,
          events: w.events,
          loopDelayP99Ms: loop.percentile(99) / 1e6,
          actions: Object.fromEntries([...w.byAction].map(([k, v]) => [k, { n: v.n, bad: v.bad, p99: v.latency.percentile(99) }])),
        },
      });
    } else if (m.type === 'probe') {
      fetch(m.url, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }).then(
        async (res) => send({ type: 'probed', status: res.status, body: await res.text() }),
        (err: Error) => send({ type: 'probed', status: 0, body: err.message }),
      );
    } else if (m.type === 'stop') {
      for (const u of running) u.stop();
      send({ type: 'stopped', posted });
      process.disconnect();
      setTimeout(() => process.exit(0), 100).unref();
    }
  });
  // The run gone (its IPC channel closed): nothing left to do.
  process.on('disconnect', () => process.exit(0));
}
