// Scenario 9: the sharded event bus on a Redis Cluster (issue 23). Two
// gateway processes hold the streams of the members of 200 channels, split
// between them; posts go to every channel through the API at a fixed rate;
// the same run is made with EVENT_SHARDS=4 and EVENT_SHARDS=1, in alternating
// order round by round, each configuration on fresh processes (an api,worker
// and two gateways) and a fresh key prefix on a private six-node cluster the
// bench starts (lib/redis-cluster.ts). In the table the "Axid" column is
// EVENT_SHARDS=4 and the "floor" column EVENT_SHARDS=1.
//
// Per configuration: deliveries/s (receipts at the clients), post-to-receipt
// latency, and per gateway its CPU time (/proc) per delivered and per received
// event, counted by the gateway itself (axid_events_delivered_total: frames
// written to streams; axid_events_received_total: entries read from the bus).
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Cluster } from 'ioredis';
import { busKeys, channelShard } from '../../shared/event-bus.js';
import { cpuMsOf, sleep, type Proc } from './lib/proc.js';
import { clusterUnsupported, startRedisCluster } from './lib/redis-cluster.js';
import type { Metric, Scenario } from './lib/report.js';
import { Histogram } from './lib/stats.js';
import type { Rpc } from './lib/rpc.js';
import type { PosterArgs, PosterResult } from './load/loadgen.js';
import type { StreamSpec } from './load/sse-client.js';
import { settings } from './settings.js';
import { Unavailable, addMembers, channel, sseClients, startAxid, streamUsers, type Bench } from './scenarios.js';

/** The two configurations compared. */
const SHARDS = [4, 1] as const;
type Shards = (typeof SHARDS)[number];

interface GatewayFigures {
  cpuMs: number;
  received: number;
  delivered: number;
  /** Shards the gateway read at the end (axid_event_shard_readers). */
  readers: number;
  /** Receipts at this gateway's streams. */
  receipts: number;
  /** The gateway process (its --cpu-prof file is named by it). */
  pid: number;
}

interface Run {
  deliveries: number;
  expected: number;
  deliveriesPerS: number;
  p50: number;
  p99: number;
  /** From the message's created_at to receipt (lib/sse-client.ts). */
  insertP50: number;
  insertP99: number;
  posts: PosterResult;
  gateways: [GatewayFigures, GatewayFigures];
  opened: [number, number];
  openMs: number;
  /** CPU time of the api,worker process (request, relay, jobs) per answered post. */
  apiCpuUsPerPost: number;
  /** The machine's 1-minute load average when the posting ended. */
  load: number;
  stages: Stages;
}

/** Where a post's time went before its event was on the bus (from the entries themselves, read after the run). */
interface Stages {
  /** Send → the message's created_at (the API's request handling up to the insert), p50 and p99, ms. */
  toInsert: [number, number];
  /** created_at → the relay's entry id (commit and relay). */
  insertToPublish: [number, number];
  /** Send → entry id: everything before the gateways. */
  toPublish: [number, number];
}

const T_FIELD = /"t":([0-9.]+)/;
const CREATED_AT = /"created_at":"([^"]+)"/;

/**
 * Reads the measured posts' entries back from the bus: each carries the send
 * time (metadata), the insert time (created_at) and, as its id, the relay's
 * clock when it published it (shared/relay/event-stream.ts). Nothing is added
 * to the measured path.
 */
async function publishTimes(seeds: string, prefix: string, shards: number, since: number): Promise<Stages> {
  const redis = new Cluster(
    seeds.split(',').map((hp) => ({ host: hp.split(':')[0]!, port: Number(hp.split(':')[1]) })),
    { lazyConnect: true },
  );
  redis.on('error', () => undefined);
  const toInsert = new Histogram();
  const insertToPublish = new Histogram();
  const toPublish = new Histogram();
  try {
    await redis.connect();
    for (const shard of busKeys(prefix, shards).shards) {
      for (const [id, fields] of (await redis.xrange(shard.events, '-', '+')) as [string, string[]][]) {
        const e = fields[fields.indexOf('e') + 1] ?? '';
        const t = Number(T_FIELD.exec(e)?.[1]);
        const created = Date.parse(CREATED_AT.exec(e)?.[1] ?? '');
        if (!(t >= since) || Number.isNaN(created)) continue;
        const published = Number(id.slice(0, id.indexOf('-')));
        toInsert.record(created - t);
        insertToPublish.record(published - created);
        toPublish.record(published - t);
      }
    }
  } finally {
    redis.disconnect();
  }
  const pair = (h: Histogram): [number, number] => [h.percentile(50), h.percentile(99)];
  return { toInsert: pair(toInsert), insertToPublish: pair(insertToPublish), toPublish: pair(toPublish) };
}

/** The figures of a gateway's /metrics this scenario reads. */
async function gatewayCounters(url: string) {
  const text = await (await fetch(`${url}/metrics`)).text();
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  return {
    received: value('axid_events_received_total'),
    delivered: value('axid_events_delivered_total'),
    readers: value('axid_event_shard_readers'),
  };
}

interface Layout {
  /** Channel ids, in creation order. */
  channels: string[];
  /** Per gateway, the stream specs and how many streams each channel's member has there. */
  specs: [StreamSpec[], StreamSpec[]];
  streamsOf: Map<string, number>;
  description: string;
}

/** Which members hold streams on which gateway (settings.scaleLayout). */
function layout(channels: string[], keys: string[]): Layout {
  const groups: [number[], number[]] = [[], []];
  channels.forEach((id, i) => {
    if (settings.scaleLayout === 'half') groups[i < channels.length / 2 ? 0 : 1].push(i);
    else {
      const shard = channelShard(id, 4);
      if (shard === 1 || shard === 2) groups[shard - 1]!.push(i);
    }
  });
  const streamsOf = new Map<string, number>();
  const perGateway = Math.floor(settings.scaleStreams / 2);
  const specs = groups.map((group) =>
    Array.from({ length: perGateway }, (_, j) => {
      const i = group[j % group.length]!;
      streamsOf.set(channels[i]!, (streamsOf.get(channels[i]!) ?? 0) + 1);
      return { path: '/api/v1/stream', key: keys[i] } satisfies StreamSpec;
    }),
  ) as [StreamSpec[], StreamSpec[]];
  const description =
    settings.scaleLayout === 'half'
      ? `gateway A the members of channels 0-${groups[0].length - 1}, B of channels ${groups[0].length}-${channels.length - 1} (each gateway's channels on every shard)`
      : `gateway A the members of the ${groups[0].length} channels of bus shard 1 (at EVENT_SHARDS=4), B of the ${groups[1].length} of shard 2; the ${channels.length - groups[0].length - groups[1].length} channels of shard 3 have no stream open`;
  return { channels, specs, streamsOf, description };
}

export async function scaling(b: Bench, s: Scenario, scaleDatabaseUrl: string): Promise<void> {
  const unsupported = clusterUnsupported();
  if (unsupported) {
    s.reason = `skipped: ${unsupported}`;
    throw new Unavailable(s.reason);
  }
  const cluster = await startRedisCluster(path.join(b.dataDir, 'redis-cluster'));
  b.log(`scaling: Redis Cluster ${cluster.version} at ${cluster.seeds}`);
  const { REDIS_URL: _single, ...common } = b.axidEnv;
  const env = (shards: number, prefix: string) => ({
    ...common,
    DATABASE_URL: scaleDatabaseUrl,
    REDIS_CLUSTER_NODES: cluster.seeds,
    REDIS_KEY_PREFIX: prefix,
    EVENT_SHARDS: String(shards),
  });
  const db = new pg.Client({ connectionString: scaleDatabaseUrl });
  // Ctrl-C drops the database under it (run.ts cleanup): not an unhandled error.
  db.on('error', () => undefined);
  let clients: { clients: Rpc[]; procs: Proc[] } | null = null;
  try {
    // The data: 200 channels through the API, one member each (inserted with SQL), and the owner.
    const setup = await startAxid({ ...b, axidEnv: env(1, `${b.prefix}setup:`) }, 'axid-api-scale-setup', 'api,worker');
    let lay: Layout;
    try {
      await db.connect();
      const owner = await db.query(
        'SELECT u.id, u.workspace_id FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.key_hash = encode(sha256($1::bytea), $2)',
        [b.adminKey, 'hex'],
      );
      const sb: Bench = { ...b, api: setup, db, workspaceId: owner.rows[0].workspace_id, ownerId: owner.rows[0].id };
      const users = await streamUsers(sb, settings.scaleChannels);
      const channels: string[] = [];
      for (let i = 0; i < settings.scaleChannels; i++) {
        const id = await channel(sb, `bench-scale-${b.id}-${i}`);
        await addMembers(sb, id, [users.userIds[i]!]);
        channels.push(id);
      }
      lay = layout(channels, users.keys);
    } finally {
      await setup.proc.stop(3000);
    }
    clients = await sseClients(b, 2);
    // Each client process holds one gateway's streams.
    const fdLimit = await clients.clients[0]!.call<number>('fdLimit');
    if (lay.specs[0].length > fdLimit - 500) throw new Error(`the open-file limit here is ${fdLimit}: too low for ${lay.specs[0].length} streams in one process`);

    const runs: Record<Shards, Run[]> = { 4: [], 1: [] };
    for (let round = 1; round <= settings.rounds; round++) {
      // Alternating order: the drift of a shared machine does not favour one side.
      for (const shards of round % 2 ? SHARDS : [...SHARDS].reverse()) {
        runs[shards].push(await measure(b, clients.clients, lay, env(shards, `${b.prefix}s${shards}r${round}:`), shards, cluster.seeds));
        const r = runs[shards][runs[shards].length - 1]!;
        b.log(
          `scaling: round ${round} EVENT_SHARDS=${shards}: ${r.deliveriesPerS.toFixed(0)} deliveries/s, p99 ${r.p99.toFixed(1)} ms (POST p99 ${r.posts.p99.toFixed(1)} ms, insert→receipt p99 ${r.insertP99.toFixed(1)} ms, post→published p99 ${r.stages.toPublish[1].toFixed(1)} ms), ` +
            r.gateways.map((g, i) => `${'AB'[i]} (pid ${g.pid}): ${g.readers} shards, ${g.received} received, ${g.delivered} delivered, ${g.cpuMs} ms CPU`).join('; '),
        );
      }
    }
    report(s, lay, runs);
  } finally {
    for (const p of clients?.procs ?? []) await p.stop(1000);
    await db.end().catch(() => undefined);
    await cluster.stop();
  }
}

/** One configuration, one round: fresh api,worker and gateways, streams opened, a warm-up, then the measured posts. */
async function measure(b: Bench, clients: Rpc[], lay: Layout, env: Record<string, string>, shards: number, seeds: string): Promise<Run> {
  const sb = { ...b, axidEnv: env };
  const api = await startAxid(sb, `axid-api-scale-${shards}`, 'api,worker');
  const gateways: { proc: Proc; url: string }[] = [];
  try {
    gateways.push(...(await Promise.all(['A', 'B'].map((g) => startAxid(sb, `axid-gateway-scale-${shards}${g}`, 'gateway', { raiseFileLimit: true })))));
    const t = Date.now();
    const opened = await Promise.all(
      clients.map((c, i) =>
        c.call<{ opened: number; failed: number; errors: Record<string, number> }>(
          'open',
          { url: gateways[i]!.url, specs: lay.specs[i], concurrency: 250, timeoutMs: 30_000 },
          180_000,
        ),
      ),
    );
    const openMs = Date.now() - t;
    for (const [i, o] of opened.entries()) if (o.failed) b.log(`scaling: gateway ${'AB'[i]}: ${o.failed} streams failed to open: ${JSON.stringify(o.errors)}`);
    const paths = lay.channels.map((id) => `/api/v1/channels/${id}/messages`);
    const post = (seconds: number) =>
      b.loadgen.call<PosterResult>(
        'poster',
        { url: api.url, paths, key: b.adminKey, rate: settings.scaleRate, durationMs: seconds * 1000, metadata: true } satisfies PosterArgs,
        (seconds + 30) * 1000,
      );
    // Warm-up, not measured: the code is compiled and every reader started.
    await receive(clients, lay, await post(2));
    // Late frames of the warm-up (a starved process) would count in the measured window.
    await sleep(1000);

    await Promise.all(clients.map((c) => c.call('reset')));
    const before = await Promise.all(gateways.map(async (g) => ({ cpuMs: cpuMsOf(g.proc.pid), ...(await gatewayCounters(g.url)) })));
    const apiCpuBefore = cpuMsOf(api.proc.pid);
    const posts = await post(settings.scaleSeconds);
    const { expected } = await receive(clients, lay, posts);
    const after = await Promise.all(gateways.map(async (g) => ({ cpuMs: cpuMsOf(g.proc.pid), ...(await gatewayCounters(g.url)) })));
    const apiCpuMs = cpuMsOf(api.proc.pid) - apiCpuBefore;
    const load = os.loadavg()[0]!;
    const stages = await publishTimes(seeds, env.REDIS_KEY_PREFIX!, shards, posts.firstSendAt);
    const stats = await Promise.all(
      clients.map((c) => c.call<{ deliveries: number; lastAt: number; hist: [number, number][]; fromInsert: [number, number][] }>('stats')),
    );
    const hist = Histogram.fromSparse(stats.map((x) => x.hist));
    const fromInsert = Histogram.fromSparse(stats.map((x) => x.fromInsert));
    const deliveries = stats.reduce((n, x) => n + x.deliveries, 0);
    const lastAt = Math.max(...stats.map((x) => x.lastAt));
    return {
      deliveries,
      expected,
      deliveriesPerS: deliveries > 0 ? deliveries / ((lastAt - posts.firstSendAt) / 1000) : 0,
      p50: hist.percentile(50),
      p99: hist.percentile(99),
      insertP50: fromInsert.percentile(50),
      insertP99: fromInsert.percentile(99),
      posts,
      gateways: before.map((x, i) => ({
        cpuMs: after[i]!.cpuMs - x.cpuMs,
        received: after[i]!.received - x.received,
        delivered: after[i]!.delivered - x.delivered,
        readers: after[i]!.readers,
        receipts: stats[i]!.deliveries,
        pid: gateways[i]!.proc.pid,
      })) as [GatewayFigures, GatewayFigures],
      opened: opened.map((o) => o.opened) as [number, number],
      openMs,
      apiCpuUsPerPost: (apiCpuMs * 1000) / Math.max(1, posts.ok),
      stages,
      load,
    };
  } finally {
    // The servers close first: the closed sockets' TIME_WAIT lands on their side.
    await Promise.all(gateways.map((g) => g.proc.stop(1500)));
    await Promise.all(clients.map((c) => c.call('close')));
    await api.proc.stop(3000);
  }
}

/** Waits until every expected receipt arrived, or none for 2 s (at most 15 s). */
async function receive(clients: Rpc[], lay: Layout, posts: PosterResult) {
  const expected = posts.okPerPath.reduce((n, ok, i) => n + ok * (lay.streamsOf.get(lay.channels[i]!) ?? 0), 0);
  let last = -1;
  let lastChange = Date.now();
  const hardStop = Date.now() + 15_000;
  for (;;) {
    const got = (await Promise.all(clients.map((c) => c.call<number>('count')))).reduce((a, x) => a + x, 0);
    if (got >= expected) break;
    if (got !== last) {
      last = got;
      lastChange = Date.now();
    }
    if (Date.now() - lastChange > 2000 || Date.now() > hardStop) break;
    await sleep(100);
  }
  return { expected };
}

const spread = (xs: number[], digits = 1) => (xs.length ? `${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)}` : '—');

function report(s: Scenario, lay: Layout, runs: Record<Shards, Run[]>) {
  const four = runs[4];
  const one = runs[1];
  const vs = (metric: string, unit: string, pick: (r: Run) => number, target?: Metric['target']): Metric => ({
    metric: `${metric}, 4 shards vs 1`,
    unit,
    axid: four.map(pick),
    floor: one.map(pick),
    ...(target ? { target } : {}),
  });
  const perGateway = (g: 0 | 1) => {
    const name = `gateway ${'AB'[g]}`;
    return [
      vs(`${name} CPU per delivered event`, 'µs', (r) => (r.gateways[g].cpuMs * 1000) / Math.max(1, r.gateways[g].delivered), { kind: 'ratio', op: '<=', value: 1.1 }),
      vs(`${name} events received`, '/s', (r) => r.gateways[g].received / settings.scaleSeconds, { kind: 'ratio', op: '<', value: 1 }),
      vs(`${name} CPU per received event`, 'µs', (r) => (r.gateways[g].cpuMs * 1000) / Math.max(1, r.gateways[g].received)),
      vs(`${name} CPU`, '% of a core', (r) => (r.gateways[g].cpuMs / 10) / ((r.posts.lastSendAt - r.posts.firstSendAt) / 1000 || 1)),
    ];
  };
  s.metrics.push(
    vs('deliveries/s', '/s', (r) => r.deliveriesPerS),
    vs('p99 post→receipt', 'ms', (r) => r.p99),
    vs('p50 post→receipt', 'ms', (r) => r.p50),
    // The POST's own answer is part of post→receipt: whether the API (not the bus) made a slow receipt.
    vs('POST p99 latency', 'ms', (r) => r.posts.p99),
    vs('p99 insert→receipt', 'ms', (r) => r.insertP99),
    vs('p50 insert→receipt', 'ms', (r) => r.insertP50),
    vs('API CPU per post', 'µs', (r) => r.apiCpuUsPerPost),
    vs('p99 post→published', 'ms', (r) => r.stages.toPublish[1]),
    vs('p99 post→insert', 'ms', (r) => r.stages.toInsert[1]),
    vs('p99 insert→published', 'ms', (r) => r.stages.insertToPublish[1]),
    vs('p50 post→published', 'ms', (r) => r.stages.toPublish[0]),
    { metric: 'p99 post→receipt, 4 shards', unit: 'ms', axid: four.map((r) => r.p99), floor: [], target: { kind: 'abs', op: '<', value: 100 } },
    { metric: 'p99 post→receipt, 1 shard', unit: 'ms', axid: one.map((r) => r.p99), floor: [], target: { kind: 'abs', op: '<', value: 100 } },
    ...perGateway(0),
    ...perGateway(1),
  );
  const opened = [...four, ...one].map((r) => r.opened[0] + r.opened[1]);
  const lost = (rs: Run[]) => rs.reduce((n, r) => n + Math.max(0, r.expected - r.deliveries), 0);
  const failedPosts = [...four, ...one].reduce((n, r) => n + r.posts.failed, 0);
  s.notes.push(
    `rows "4 shards vs 1": the Axid column is EVENT_SHARDS=4, the floor column EVENT_SHARDS=1, both Axid on a local Redis Cluster (3 primaries, 3 replicas); ratio = 4 shards ÷ 1 shard per round`,
    `${Math.min(...opened)}–${Math.max(...opened)} streams over 2 gateway processes; ${lay.description}; ${settings.scaleRate} posts/s round robin over ${lay.channels.length} channels for ${settings.scaleSeconds} s through one api,worker process`,
    `shards read at the end: 4 shards: ${four.map((r) => r.gateways.map((g) => g.readers).join('+')).join(' / ')}; 1 shard: ${one.map((r) => r.gateways.map((g) => g.readers).join('+')).join(' / ')} (gateway A+B per round)`,
    `spread over the rounds (min–max): CPU per delivered event A ${spread(four.map((r) => (r.gateways[0].cpuMs * 1000) / r.gateways[0].delivered), 2)} µs with 4 shards, ${spread(one.map((r) => (r.gateways[0].cpuMs * 1000) / r.gateways[0].delivered), 2)} with 1; B ${spread(four.map((r) => (r.gateways[1].cpuMs * 1000) / r.gateways[1].delivered), 2)} / ${spread(one.map((r) => (r.gateways[1].cpuMs * 1000) / r.gateways[1].delivered), 2)}; p99 ${spread(four.map((r) => r.p99))} ms / ${spread(one.map((r) => r.p99))} ms`,
    `streams opened in ${[...four, ...one].map((r) => (r.openMs / 1000).toFixed(1)).join(' / ')} s (4 shards, then 1)`,
  );
  // More receipts than answered posts × streams: late frames of the warm-up, a post answered after the poster stopped
  // waiting (10 s), or an event published twice (the relay publishes a batch again when its WAIT for a replica timed out).
  const extra = (rs: Run[]) => rs.reduce((n, r) => n + Math.max(0, r.deliveries - r.expected), 0);
  const unanswered = [...four, ...one].reduce((n, r) => n + (r.posts.sent - r.posts.ok - r.posts.failed), 0);
  if (extra(four) + extra(one) > 0)
    s.notes.push(
      `receipts beyond answered posts × streams: ${extra(four)} with 4 shards, ${extra(one)} with 1 (late frames of the warm-up, posts answered after the poster stopped waiting (${unanswered}), or events published twice)`,
    );
  s.notes.push(`1-minute load average at the end of each round's posting: ${four.map((r) => r.load.toFixed(1)).join(' / ')} (4 shards), ${one.map((r) => r.load.toFixed(1)).join(' / ')} (1 shard)`);
  if (lost(four) + lost(one) > 0) s.notes.push(`expected deliveries not arrived 2 s after the last one: ${lost(four)} with 4 shards, ${lost(one)} with 1`);
  if (failedPosts > 0) s.notes.push(`${failedPosts} posts failed`);
}
