// The one event publisher. A service records events inside its transaction
// (an outbox row, committed or rolled back with the change); the relay moves
// them to the Redis stream once committed (relay/outbox-relay.ts). Ephemeral events
// (typing) skip the outbox and go straight to the stream.
import { commitDeadline, type Db, type Knex } from './db/knex.js';
import { serviceUnavailable } from './errors.js';
import { LIVE_MAXLEN, liveKeyOf, type BusKeys } from './event-bus.js';
import { answering, type RedisClient } from './redis.js';
import { tracing } from './tracing.js';

export const EVENT_TYPES = [
  'message.created',
  'message.updated',
  'message.deleted',
  'reaction.added',
  'reaction.removed',
  'typing',
  'channel.created',
  'channel.updated',
  'channel.member_added',
  'channel.member_removed',
  'dm.created',
  'user.created',
  'user.updated',
  'member.updated',
  'member.removed',
  'file.ready',
  'presence.updated',
  // Level 3 (docs/feature-levels.md).
  'interaction.action',
  'message.appended',
  // Level 3: to its owner, when a subscription failing for 24 h is disabled (docs/bots.md).
  'event_subscription.disabled',
  'channel.read',
  // To owners and admins when an import ends (contract §13, docs/migrating-from-slack.md).
  'import.finished',
  // Level 3: agents at home (docs/bots.md).
  'agent.status',
  'interaction.feedback',
  'interaction.approval',
  'command.invoked',
  'message.ephemeral',
  // Level 3: user groups (contract §14, docs/team-chat.md).
  'user_group.created',
  'user_group.updated',
  'user_group.deleted',
  // Level 3 (contract §14).
  'message.pinned',
  'message.unpinned',
] as const;

/** Internal events route work inside the stack and never reach clients. */
export const INTERNAL_EVENT_TYPES = ['api_key.revoked', 'webhook.deleted'] as const;

export type EventType = (typeof EVENT_TYPES)[number] | (typeof INTERNAL_EVENT_TYPES)[number];

/**
 * Events that change who may do what: the API's access cache drops entries on
 * them. The relay also publishes them to a second, small stream (the access
 * stream), which a process without the gateway role reads instead of every
 * message (reading every message cost an API process about 90 µs per post).
 */
export const ACCESS_EVENT_TYPES: ReadonlySet<string> = new Set<EventType>([
  'api_key.revoked',
  'member.removed',
  'member.updated',
  'channel.member_added',
  'channel.member_removed',
  'channel.updated',
  'webhook.deleted',
]);

/**
 * Where an event goes. The gateway routes on this alone, never querying the
 * database per event:
 * - `channel`: the members of channel_id (channels, DMs), plus user_ids if given;
 * - `workspace`: every connection of the workspace;
 * - `users`: exactly user_ids.
 */
export type EventAddress =
  | { scope: 'channel'; workspace_id: string; channel_id: string; user_ids?: string[] }
  | { scope: 'workspace'; workspace_id: string }
  | { scope: 'users'; workspace_id: string; user_ids: string[] };

/** Events that never reach a client (stream or event subscription). */
export const isInternalEvent = (type: string) => (INTERNAL_EVENT_TYPES as readonly string[]).includes(type);

/**
 * Whether a user's stream receives an event: the one rule of what a user's
 * stream sees, given whether the user is a member of the addressed channel.
 * The gateway routes by it (services/gateway/hub.ts, asking its index of
 * members) and event subscriptions deliver by it (asking the database at
 * delivery time: services/core/event-subscriptions).
 */
export function streamReceives<U extends { userId: string; workspaceId: string }>(
  event: Pick<AxidEvent, 'type' | 'to'>,
  user: U,
  isMemberOf: (channelId: string, user: U) => boolean,
): boolean {
  const { to } = event;
  if (isInternalEvent(event.type) || to.workspace_id !== user.workspaceId) return false;
  if (to.scope === 'workspace') return true;
  if (to.user_ids?.includes(user.userId)) return true;
  return to.scope === 'channel' && isMemberOf(to.channel_id, user);
}

export interface AxidEvent {
  type: EventType;
  to: EventAddress;
  /** The payload clients receive; `type` is added to it on the wire. */
  data: Record<string, unknown>;
}


/** A listener may return a promise: work the writing request waits for before it answers (settled()). */
type CommitListener = (events: AxidEvent[]) => void | Promise<void>;

/** How long a writing request waits for its commit's listeners at most (they bound their own work; this is the backstop). */
const SETTLE_MS = 1_000;

/**
 * The listeners for the events one runtime commits (its relay is woken to
 * publish them, its access cache and page cache drop what they change). One
 * per runtime, not per process: two stacks in one process (tests) never see
 * each other's commits, whose outbox rows live in another database.
 */
export class CommitListeners {
  private readonly listeners = new Set<CommitListener>();
  private readonly pending = new Set<Promise<void>>();

  /** Runs `listener` right after each commit, before the request answers. Returns the unsubscribe function. */
  subscribe(listener: CommitListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Tells the listeners that outbox rows were committed (in place of
   * pg_notify, which serializes every notifying commit in Postgres). Call it
   * after a statement that wrote outbox rows outside a transaction.
   */
  committed(events: AxidEvent[]): void {
    for (const listener of this.listeners) {
      const work = listener(events);
      if (!work) continue;
      const done = work.catch(() => undefined);
      this.pending.add(done);
      void done.finally(() => this.pending.delete(done));
    }
  }

  /**
   * Resolves once the listeners' work of the commits so far is done (the
   * page cache's invalidations): a writing request waits for it before it
   * answers (shared/http/route.ts), so that its writer's next read, on any
   * process, finds nothing older than the write. Bounded by SETTLE_MS.
   */
  async settled(): Promise<void> {
    if (this.pending.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, SETTLE_MS)));
    await Promise.race([Promise.all(this.pending), late]).finally(() => clearTimeout(timer));
  }

  get size() {
    return this.listeners.size;
  }
}

/** What recording events needs of the runtime: its commit listeners. */
export interface EventSink {
  events: CommitListeners;
}

function afterCommit(rt: EventSink, trx: Db, events: AxidEvent[]) {
  if (rt.events.size === 0) return;
  const t = trx as Knex.Transaction;
  if (t.isTransaction && t.executionPromise) void t.executionPromise.then(() => rt.events.committed(events), () => undefined);
  else rt.events.committed(events); // autocommit: the insert was the commit
}

/** Records events in the caller's transaction; they are published after commit. */
export async function recordEvents(rt: EventSink, trx: Db, events: AxidEvent[]): Promise<void> {
  if (events.length === 0) return;
  const commitBy = commitDeadline(trx);
  // The change's trace goes with its events (shared/tracing.ts), when tracing is on.
  const traceContext = tracing ? tracing.active() : undefined;
  await trx('outbox').insert(
    events.map((event) => (traceContext ? { event: JSON.stringify(event), commit_by: commitBy, trace_context: traceContext } : { event: JSON.stringify(event), commit_by: commitBy })),
  );
  afterCommit(rt, trx, events);
}

export const recordEvent = (rt: EventSink, trx: Db, event: AxidEvent) => recordEvents(rt, trx, [event]);

export const ACCESS_STREAM_MAXLEN = 10_000;

/**
 * Publishes an ephemeral event (typing, presence) at once, to the live stream
 * of its shard (event-bus.ts). While Redis is away it is refused (503) instead
 * of waiting in ioredis's offline queue: nothing keeps it.
 */
export async function publishEphemeral(redis: RedisClient, bus: BusKeys, event: AxidEvent): Promise<void> {
  if (!answering(redis)) throw serviceUnavailable();
  await redis.xadd(liveKeyOf(bus, event.to), 'MAXLEN', '~', LIVE_MAXLEN, '*', 'e', JSON.stringify(event));
}
