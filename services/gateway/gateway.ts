// The gateway role: GET /api/v1/stream as server-sent events (docs/realtime.md).
// One Redis reader per shard of the event bus (bus.ts) feeds a local routing
// index (hub.ts); each frame is encoded once per event and written to every
// connection that may see it, through a bounded per-connection buffer. At
// level 3 (stream-level.ts) frames carry ids, a stream resumes from one
// (bus.ts), and presence is kept across gateways (presence.ts).
import type { ServerResponse } from 'node:http';
import type { Next } from 'koa';
import { authenticate, bearerToken } from '../../shared/auth.js';
import { AppError } from '../../shared/errors.js';
import type { AppContext } from '../../shared/http/context.js';
import type { Runtime } from '../../shared/runtime.js';
import { presentUser } from '../core/users/users.presenter.js';
import { findStreamHolder } from '../core/users/users.store.js';
// rt.presenters (the objects of the runtime's level) is declared by core.
import type {} from '../core/presenters.js';
import { randomBytes } from 'node:crypto';
import { publishEphemeral } from '../../shared/events.js';
import { tracing } from '../../shared/tracing.js';
import { channelOf, channelShard, homeShard } from '../../shared/event-bus.js';
import { entryTime } from '../../shared/stream-reader.js';
import { GatewayBus, formatPosition, parsePosition, startOf, type BusPosition } from './bus.js';
import { Frame, SseConnection, type ConnectionShared } from './connection.js';
import { Hub, encodeFrame, type Ticket } from './hub.js';
import { gatewayMetrics } from './metrics.js';
import { Presence } from './presence.js';
import { streamFeatures } from './stream-level.js';
import { STREAM_SCOPE, reachesEvent, requireScope } from '../../shared/scopes.js';

export const STREAM_PATH = '/api/v1/stream';

export interface GatewayOptions {
  databaseUrl: string;
  redisUrl: string;
  /** The longest a stream stays silent: then a comment line keeps it open (at most 20 s: docs/realtime.md). */
  keepAliveMs?: number;
  /** Bytes a client may fall behind before its stream is cut off. */
  maxQueueBytes?: number;
  /** How long one XREAD blocks before it is issued again. */
  readBlockMs?: number;
  /** How long a shard no stream needs is still read (bus.ts; default 10 s). */
  readerLingerMs?: number;
}

const KEEP_ALIVE = Frame.of(': keep-alive\n\n');

export function createGateway(rt: Runtime, o: GatewayOptions) {
  const keepAliveMs = o.keepAliveMs ?? 15_000;
  const maxQueueBytes = o.maxQueueBytes ?? 1024 * 1024;
  const metrics = gatewayMetrics(rt.metrics);

  const features = streamFeatures(rt.config.featureLevel);

  const bus: GatewayBus = new GatewayBus({
    bus: rt.bus,
    redisUrl: o.redisUrl,
    redis: rt.redis,
    log: rt.log,
    blockMs: o.readBlockMs ?? 5_000,
    ...(o.readerLingerMs === undefined ? {} : { lingerMs: o.readerLingerMs }),
    onReaders: (count) => metrics.shardReaders.set(count),
    retentionMs: rt.config.streamRetentionSeconds * 1000,
    onEntry(entry) {
      metrics.received.inc();
      if (entry.durable) metrics.lag.set(Math.max(0, Date.now() - entryTime(entry.id)));
      // A membership copy on shard 0 is delivered from its home shard: read
      // from just before it when a user here joins a channel of a shard not read yet.
      if (entry.copy) {
        const home = homeShard(channelOf(entry.event), rt.bus.shards.length);
        if (!bus.reads(home) && hub.concernsLocalUser(entry.event)) bus.startBefore(home, entry.id);
        return;
      }
      // Counted once per event: a counter call per delivery shows in the profile.
      if (entry.trace && tracing) {
        const { event } = entry;
        metrics.delivered.inc(tracing.run(`gateway deliver ${event.type}`, 'consumer', entry.trace, { 'axid.event.type': event.type }, () => hub.route(event)));
      } else metrics.delivered.inc(hub.route(entry.event));
    },
    onBatchEnd: () => hub.endBatch(),
  });
  const shardOf = (channelId: string) => channelShard(channelId, rt.bus.shards.length);
  const hub = new Hub(features.replay ? () => bus.frameId() : () => undefined, {
    added: (channelId) => bus.need(shardOf(channelId)),
    removed: (channelId) => bus.release(shardOf(channelId)),
    ready: () => bus.ready(),
  });

  const presence = features.presence
    ? new Presence({
        redis: rt.redis,
        prefix: rt.config.redisKeyPrefix,
        gatewayId: randomBytes(8).toString('hex'),
        ttlMs: rt.config.presenceTtlSeconds * 1000,
        log: rt.log,
        announce(workspaceId, userId, status) {
          const event = { type: 'presence.updated' as const, to: { scope: 'workspace' as const, workspace_id: workspaceId }, data: { user_id: userId, status } };
          publishEphemeral(rt.redis, rt.bus, event).catch((err: Error) => rt.log.warn({ err: err.message }, 'presence: announcing failed'));
        },
      })
    : null;

  // Only streams with nothing written for a while get the comment: a busy
  // gateway would otherwise write to every stream at once each interval, in
  // the middle of its deliveries. Checked every third of the interval, so no
  // stream stays silent longer than keepAliveMs.
  const keepAliveTick = keepAliveMs / 3;
  const keepAlive = setInterval(() => {
    const now = Date.now();
    // No copy of the set: a stream cut off meanwhile leaves it, which its iterator allows.
    for (const conn of hub.connections()) if (now - conn.lastWriteAt >= keepAliveMs - keepAliveTick) conn.send(KEEP_ALIVE, false, now);
  }, keepAliveTick);
  keepAlive.unref();

  let closing = false;

  // Open streams per user on this process. Counted per process, not across
  // gateways: a stream lives on one process, so the count needs no expiry or
  // heartbeat to survive a crash; N gateways allow at most N x the cap
  // (docs/realtime.md).
  const maxPerUser = rt.config.streamMaxPerUser;
  const openPerUser = new Map<string, number>();
  function holdStreamSlot(userId: string) {
    const open = openPerUser.get(userId) ?? 0;
    if (open >= maxPerUser) {
      throw new AppError('too_many_streams', `this user already has ${maxPerUser} open streams (STREAM_MAX_PER_USER): close one before opening another`);
    }
    openPerUser.set(userId, open + 1);
  }
  function releaseStreamSlot(userId: string) {
    const left = (openPerUser.get(userId) ?? 1) - 1;
    if (left > 0) openPerUser.set(userId, left);
    else openPerUser.delete(userId);
  }

  /** The timers that end the streams of keys that expire (hub.ts ends revoked ones); most keys never do. */
  const expiring = new Map<SseConnection, NodeJS.Timeout>();

  // Everything a stream holds is let go of here, once, whoever ends it: one
  // function shared by all streams instead of closures kept by each (an idle
  // stream's memory is most of what a gateway holds: docs/realtime.md).
  const shared: ConnectionShared = {
    maxQueueBytes,
    metrics,
    ended(conn) {
      hub.detach(conn);
      releaseStreamSlot(conn.info.userId);
      if (conn.present) presence?.closed(conn.info.workspaceId, conn.info.userId);
      const timer = expiring.get(conn);
      if (timer) clearTimeout(timer);
      expiring.delete(conn);
    },
  };

  async function middleware(ctx: AppContext, next: Next): Promise<void> {
    if (ctx.path !== STREAM_PATH) return next();
    if (ctx.method !== 'GET') return next();
    // Its own series in the request metrics (a stream lasts minutes: kept out of latency alerts) and its span's name.
    ctx.state.route = STREAM_PATH;
    // Errors here (401, key_expired) are rendered as the JSON envelope.
    if (ctx.state.authFailure) throw ctx.state.authFailure;
    const actor = ctx.state.actor ?? (await authenticate(rt.db, bearerToken(ctx.get('authorization')), rt.access));
    requireScope(actor, STREAM_SCOPE);
    const info = { keyId: actor.keyId, userId: actor.userId, workspaceId: actor.workspaceId, conversationIds: actor.conversationIds };
    holdStreamSlot(actor.userId);
    const ticket = hub.reserve(info);
    // Once a connection exists, its end gives the slot back (shared.ended).
    let streaming = false;
    try {
      streaming = await openStream(ctx, ticket);
    } finally {
      hub.release(ticket);
      if (!streaming) releaseStreamSlot(actor.userId);
    }
  }

  /** Opens the stream; true once it has a connection (which then gives its slot back when it ends). */
  async function openStream(ctx: AppContext, ticket: Ticket): Promise<boolean> {
    const { info } = ticket;
    // Read after the ticket exists, and only while the key and the user are
    // still valid: a revocation committed after this read cancels the ticket,
    // and a membership change is applied over the memberships it returns
    // (hub.ts). On the primary: it grants access, and a replica's snapshot
    // may predate a revocation or membership change whose event has already
    // gone by (docs/architecture.md, "Read replicas").
    const snapshot = await findStreamHolder(rt.db, info.keyId);
    if (closing) throw new AppError('service_unavailable', 'this gateway is shutting down: reconnect');
    if (!snapshot || ticket.cancelled) throw new AppError('unauthorized', 'a valid API key is required: send Authorization: Bearer <API_KEY>');

    // From here on the response is ours: headers already set on ctx (feature
    // level, request id, rate limits) were set on ctx.res and go out with it.
    ctx.respond = false;
    ctx.status = 200;
    const res = ctx.res;
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache',
      'X-Accel-Buffering': 'no',
      Connection: 'keep-alive',
    });
    res.flushHeaders();
    ctx.req.socket.setNoDelay(true);
    ctx.req.socket.setTimeout(0);
    releaseKoaContext(res);

    const conn = new SseConnection(info, res, shared);
    // A key that expires ends its streams then, as its revocation would (hub.ts).
    if (snapshot.keyExpiresAt) endAt(conn, snapshot.keyExpiresAt.getTime());
    try {
      // Level 3: a stream that names the last frame it got resumes after it (bus.ts).
      const from = features.replay ? resumePoint(ctx) : null;
      const resumed = from ? await bus.canResume(from) : false;
      if (presence && !conn.closed) {
        conn.present = true;
        await presence.opened(info.workspaceId, info.userId);
      }
      const online = presence ? await presence.online(info.workspaceId) : [];
      const init = (id: string | undefined) =>
        encodeFrame(
          'init',
          {
            presence: Object.fromEntries(online.map((userId) => [userId, 'online'])),
            user: presentUser(snapshot.user),
            workspace: rt.presenters.workspace(snapshot.workspace),
            ...(features.replay ? { resumed } : {}),
          },
          id,
        );
      let until: BusPosition | null = null;
      let membership = new Set<string>();
      await hub.attach(conn, ticket, snapshot.channelIds, () => {
        if (!resumed) return conn.open(init(features.replay ? bus.frameId() : undefined));
        // Live frames wait while the replay up to here is read; the replay
        // reads membership back from where it stands here.
        conn.hold();
        until = bus.position();
        membership = hub.membershipOf(info.userId);
      });
      if (from && until && !conn.closed) await replay(conn, from, until, membership, init);
    } catch (err) {
      rt.log.error({ err, req_id: ctx.state.requestId }, 'stream: opening failed');
      conn.end();
    }
    if (closing) conn.end();
    return true;
  }

  /** Ends `conn` at `at` (ms since the epoch); timers wait at most about 24 days, so a later one is set again. */
  function endAt(conn: SseConnection, at: number) {
    if (conn.closed) return;
    const timer = setTimeout(() => (Date.now() >= at ? conn.end() : endAt(conn, at)), Math.min(Math.max(0, at - Date.now()), 2 ** 31 - 1));
    timer.unref();
    expiring.set(conn, timer);
  }

  /** The `Last-Event-ID` header, or the `last_event_id` query (EventSource cannot set headers on a first connect). */
  function resumePoint(ctx: AppContext): BusPosition | null {
    const query = ctx.query.last_event_id;
    const text = ctx.get('last-event-id') || (typeof query === 'string' ? query : '');
    return text ? parsePosition(text) : null;
  }

  /**
   * Writes `init`, every entry after `from` up to `until` that live delivery
   * would have sent the user and that the user may see now (`membership`: the
   * user's at `until`), then the live frames held meanwhile. Each replayed
   * frame's id is where the replay stands after it.
   */
  async function replay(conn: SseConnection, from: BusPosition, until: BusPosition, membership: Set<string>, init: (id: string) => Frame) {
    const at: BusPosition = new Map([...until].map(([shard, p]) => [shard, { epoch: p.epoch, id: startOf(from, shard) }]));
    const initFrame = init(formatPosition(at));
    const frames: Frame[] = [];
    const entries = await bus.entriesBetween(from, until);
    const sent = hub.replayed(conn.info.userId, entries.map((e) => e.event), membership);
    for (const [i, entry] of entries.entries()) {
      at.set(entry.shard, { epoch: until.get(entry.shard)!.epoch, id: entry.id });
      if (sent[i] && reachesEvent(conn.info, entry.event)) frames.push(encodeFrame(entry.event.type, entry.event.data, formatPosition(at)));
    }
    metrics.delivered.inc(frames.length);
    conn.resume(initFrame, frames);
  }

  return {
    middleware,
    /** Ends every stream cleanly, stops the reader and closes its connection. */
    async close() {
      closing = true;
      clearInterval(keepAlive);
      hub.endAll();
      await presence?.stop();
      await bus.close();
    },
    /** Resolves once the readers know where they start. */
    ready: () => bus.ready(),
    /** The shards this gateway reads now. */
    shardsRead: () => bus.reading,
    hub,
  };
}

/**
 * Koa hooks every answer's end (on-finished) with a closure over the request's
 * whole context (request, response, state), to report errors of the answers
 * it writes. A stream's answer is the gateway's (`ctx.respond = false`) and
 * lasts as long as the stream, so the hook is emptied, as on-finished does once
 * it fired, and the context goes at once: about 1 KB of each idle stream
 * (docs/realtime.md). test/api/stream-memory.test.ts fails if on-finished
 * stops keeping its hooks there.
 */
function releaseKoaContext(res: ServerResponse) {
  const hook = (res as { __onFinished?: { queue: unknown[] | null } }).__onFinished;
  if (hook) hook.queue = null;
}
