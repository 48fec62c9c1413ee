// The per-process routing index. Every event read from the stream is routed
// here once, on its address alone: workspace → users → connections, and
// channel → member users (only users connected to this process are indexed).
// Membership changes are learnt from the events themselves, so routing never
// queries the database.
import { isInternalEvent, streamReceives, type AxidEvent } from '../../shared/events.js';
import { MEMBERSHIP_EVENT_TYPES as MEMBERSHIP_EVENTS } from '../../shared/event-bus.js';
import type { Socket } from 'node:net';
import { Frame, type ConnectionInfo, type SseConnection } from './connection.js';
import { reachesEvent } from '../../shared/scopes.js';

/**
 * A stream being opened: registered right after its key was checked, before
 * its holder and memberships are read, so that a revocation or removal read
 * from the bus meanwhile cancels it, and a membership change is applied over
 * what the read returns.
 */
export interface Ticket {
  info: ConnectionInfo;
  cancelled: boolean;
}

/** What the gateway knows about one user with streams on this process. */
interface UserState {
  userId: string;
  workspaceId: string;
  connections: Set<SseConnection>;
  /** The channels and DMs the user is a member of; null until the first stream's read of them attaches. */
  channels: Set<string> | null;
  /** Membership events routed while `channels` is null, applied in order over the read. */
  pending: AxidEvent[];
  /** Streams of the user being opened (tickets). */
  opening: number;
}

/** Told when the index gains or loses a channel (the gateway reads the shards of the channels indexed: bus.ts). */
export interface ChannelWatch {
  added(channelId: string): void;
  removed(channelId: string): void;
  /** Resolves once what added() started is ready (a stream goes live after it). */
  ready(): Promise<void>;
}

/** One frame; `id` only where the stream's level has replay (stream-level.ts: the caller passes none otherwise). */
export const encodeFrame = (type: string, data: Record<string, unknown>, id?: string) =>
  Frame.of(`${id === undefined ? '' : `id: ${id}\n`}event: ${type}\ndata: ${JSON.stringify(Object.assign({ type }, data, { type }))}\n\n`);

/** The id of a frame written now, or undefined where frames carry none (level 2). */
export type FrameIds = () => string | undefined;

const NO_USERS: ReadonlySet<UserState> = new Set();

/** A turn of uncorking: as long as a turn of routing (shared/stream-reader.ts). */
const UNCORK_TURN_MS = 20;

/** Membership as the hub knows it (loaded at attach, kept up to date from membership events). */
const isIndexedMember = (channelId: string, state: UserState) => state.channels?.has(channelId) === true;

export class Hub {
  private readonly users = new Map<string, UserState>();
  private readonly workspaces = new Map<string, Set<UserState>>();
  private readonly channels = new Map<string, Set<UserState>>();
  private readonly all = new Set<SseConnection>();
  private readonly tickets = new Map<Ticket, UserState>();
  /** Events routed in this read's batch (dispatched in turns: shared/stream-reader.ts). */
  private routedInBatch = 0;
  /** Sockets corked in this batch, uncorked once it ends. */
  private corked: Socket[] = [];
  /** Sockets of ended batches still to uncork (uncorkInTurns), from `uncorkedUpTo` on. */
  private toUncork: Socket[] = [];
  private uncorkedUpTo = 0;

  constructor(
    private readonly frameIds: FrameIds = () => undefined,
    private readonly watch: ChannelWatch | null = null,
    /** How long one turn of uncorking may hold the event loop (tests pass 0: one socket a turn). */
    private readonly uncorkTurnMs = UNCORK_TURN_MS,
  ) {}

  get size() {
    return this.all.size;
  }

  connections(): Iterable<SseConnection> {
    return this.all;
  }

  /**
   * Registers a stream being opened, and its user (if no stream of theirs is
   * here yet) before the caller reads the user's memberships: every membership
   * change committed after that read's snapshot is routed after this point,
   * and is applied over the read (attach). Released once opened or not.
   */
  reserve(info: ConnectionInfo): Ticket {
    const { userId, workspaceId } = info;
    let state = this.users.get(userId);
    if (!state) {
      state = { userId, workspaceId, connections: new Set(), channels: null, pending: [], opening: 0 };
      this.users.set(userId, state);
      let ws = this.workspaces.get(workspaceId);
      if (!ws) this.workspaces.set(workspaceId, (ws = new Set()));
      ws.add(state);
    }
    state.opening++;
    const ticket = { info, cancelled: false };
    this.tickets.set(ticket, state);
    return ticket;
  }

  release(ticket: Ticket) {
    const state = this.tickets.get(ticket);
    if (!state) return;
    this.tickets.delete(ticket);
    state.opening--;
    this.forget(state);
  }

  /**
   * Attaches a reserved stream's connection. `channelIds` are the user's
   * memberships read after the ticket was reserved; the first stream of the
   * user to attach indexes them, with the membership events routed since the
   * user was registered applied over them in order (later ones are kept up
   * to date by those events alone). `start` runs synchronously just before
   * the connection starts receiving events, so the init frame it writes is
   * always the first frame.
   */
  async attach(conn: SseConnection, ticket: Ticket, channelIds: readonly string[], start: () => void): Promise<void> {
    const state = this.tickets.get(ticket);
    if (!state) throw new Error('attach: the stream was not reserved, or already released');
    if (state.channels === null) {
      state.channels = new Set();
      for (const id of channelIds) this.join(state, id);
      for (const event of state.pending) this.applyMembership(state, event);
      state.pending = [];
    }
    // The shards of the user's channels are read before the stream goes live.
    const failure = this.watch ? await this.watch.ready().then(() => null, (err: unknown) => ({ err })) : null;
    if (failure || conn.closed || ticket.cancelled) {
      conn.end();
      if (failure) throw failure.err;
      return;
    }
    state.connections.add(conn);
    this.all.add(conn);
    // Indexed first: a start that ends the stream at once (no socket) takes it out again.
    start();
  }

  /** The read's batch was all routed: writes what it corked, in turns (the bus calls it after each read). */
  endBatch() {
    // A drain is under way exactly while sockets wait in `toUncork`.
    const draining = this.toUncork.length > 0;
    if (draining) for (const socket of this.corked) this.toUncork.push(socket);
    else [this.toUncork, this.corked] = [this.corked, this.toUncork];
    this.corked.length = 0;
    this.routedInBatch = 0;
    if (!draining && this.toUncork.length > 0) this.uncorkInTurns();
  }

  /**
   * Uncorks the ended batches' sockets, each uncork one writev, in turns of
   * `uncorkTurnMs` with the loop's other work between them: uncorking them all
   * at once held a gateway's event loop 240 to 385 ms at 7,000 loadtest users,
   * and every stream being opened waited that long at each step (docs/bench.md,
   * "Uncorking in turns"). Order holds: a socket still corked when the next
   * batch writes to it queues those frames behind the ones it holds.
   */
  private readonly uncorkInTurns = () => {
    const started = performance.now();
    while (this.uncorkedUpTo < this.toUncork.length) {
      this.toUncork[this.uncorkedUpTo++]!.uncork();
      if (performance.now() - started >= this.uncorkTurnMs && this.uncorkedUpTo < this.toUncork.length) {
        setImmediate(this.uncorkInTurns);
        return;
      }
    }
    this.toUncork.length = 0;
    this.uncorkedUpTo = 0;
  };

  /** Takes an ended connection out of the index (the gateway calls it for every stream that ends, attached or not). */
  detach(conn: SseConnection) {
    if (!this.all.delete(conn)) return;
    const state = this.users.get(conn.info.userId)!;
    state.connections.delete(conn);
    this.forget(state);
  }

  /** Routes one event to every connection that may see it, in call order; returns how many got it. */
  route(event: AxidEvent): number {
    const { to, type, data } = event;
    // Before the workspace is looked up: a stream opening is often the first
    // of its workspace here, and its user is indexed only once it attaches.
    for (const ticket of this.tickets.keys()) {
      if (type === 'api_key.revoked' && ticket.info.keyId === data.key_id) ticket.cancelled = true;
      if (type === 'member.removed' && ticket.info.userId === data.user_id) ticket.cancelled = true;
    }
    const ws = this.workspaces.get(to.workspace_id);
    if (!ws) return 0;
    if (type === 'api_key.revoked') {
      for (const state of ws) for (const conn of [...state.connections]) if (conn.info.keyId === data.key_id) conn.end();
    }
    if (isInternalEvent(type)) return 0; // never sent to clients

    const loaded: UserState[] = [];
    if (MEMBERSHIP_EVENTS.has(type)) {
      for (const state of ws) {
        if (state.channels === null) state.pending.push(event);
        else loaded.push(state);
      }
      // Joins take effect before delivery (the new member is told).
      if (type !== 'channel.member_removed') for (const state of loaded) this.applyMembership(state, event);
    }

    const targets = this.candidates(event, ws);
    let delivered = 0;
    if (targets.size > 0) {
      const frame = encodeFrame(type, data, this.frameIds());
      const now = Date.now();
      // The first event of a batch is written at once; from the second on (a
      // backlog read in one batch) each socket is corked, so the rest of the
      // batch reaches it in one writev (endBatch) instead of one write(2) per event.
      const cork = this.routedInBatch++ > 0 ? this.corked : null;
      for (const state of targets) {
        // The index narrows the users down; the one rule of what a stream sees decides.
        if (!streamReceives(event, state, isIndexedMember)) continue;
        for (const conn of state.connections) {
          // A key limited to conversations gets only their events (shared/scopes.ts).
          if (conn.info.conversationIds && !reachesEvent(conn.info, event)) continue;
          if (conn.send(frame, true, now, cork)) delivered++;
        }
      }
    }

    // Leaves take effect after delivery (the removed member is told).
    if (type === 'channel.member_removed') for (const state of loaded) this.applyMembership(state, event);
    if (type === 'member.removed') {
      const state = this.users.get(String(data.user_id));
      if (state) for (const conn of [...state.connections]) conn.end();
    }
    return delivered;
  }

  /** Whether a membership change concerns a user with streams here (its channel's shard must then be read). */
  concernsLocalUser(event: AxidEvent): boolean {
    const { data } = event;
    const ids =
      event.type === 'dm.created'
        ? ((data.conversation as { member_ids?: string[] } | undefined)?.member_ids ?? [])
        : event.type === 'channel.created'
          ? [(data.channel as { created_by?: string } | undefined)?.created_by ?? '']
          : [String(data.user_id)];
    return ids.some((id) => this.users.has(id));
  }

  /**
   * Whether a user with streams here may see an event now, by the rules of
   * route() (a replay decides visibility as live delivery does).
   */
  visibleTo(userId: string, event: AxidEvent): boolean {
    const state = this.users.get(userId);
    return state !== undefined && state.channels !== null && streamReceives(event, state, isIndexedMember);
  }

  /** The channels and DMs a user with streams here is a member of now, as the index knows (a copy). */
  membershipOf(userId: string): Set<string> {
    return new Set(this.users.get(userId)?.channels ?? []);
  }

  /**
   * Which of `events` (in bus order, ending where `membership` was taken) a
   * replay gives the user: what live delivery would have sent when each was
   * routed (membership then, read backwards from `membership` through the
   * user's own joins and leaves), and what the user may see now. So a
   * conversation's events from before the user joined it, or from while they
   * were out of it, are never replayed (docs/realtime.md, "Resuming").
   */
  replayed(userId: string, events: AxidEvent[], membership: Set<string>): boolean[] {
    const state = this.users.get(userId);
    if (!state) return events.map(() => false);
    const member = new Set(membership);
    const then = { userId, workspaceId: state.workspaceId };
    const out = new Array<boolean>(events.length);
    for (let i = events.length - 1; i >= 0; i--) {
      const event = events[i]!;
      const change = ownMembershipChange(event, userId);
      // Live, a leave takes effect after its delivery: before it the user was a member.
      if (change?.joined === false) member.add(change.conversationId);
      out[i] = streamReceives(event, then, (channelId) => member.has(channelId)) && this.visibleTo(userId, event);
      // A join takes effect before its delivery: before it the user was not a member.
      if (change?.joined === true) member.delete(change.conversationId);
    }
    return out;
  }

  /** Ends every stream (shutdown). */
  endAll() {
    for (const conn of [...this.all]) conn.end();
  }

  /** The users an event may reach, from the index: the workspace's, or the channel's members and the named users. */
  private candidates(event: AxidEvent, ws: Set<UserState>): ReadonlySet<UserState> {
    const { to } = event;
    if (to.scope === 'workspace') return ws;
    // The channel's own members' set, not a copy: most events are a channel's
    // alone, and copying its members cost a hash insert per delivery.
    if (to.scope === 'channel' && !to.user_ids?.length) return this.channels.get(to.channel_id) ?? NO_USERS;
    const out = new Set<UserState>();
    if (to.scope === 'channel') for (const state of this.channels.get(to.channel_id) ?? []) out.add(state);
    for (const id of to.user_ids ?? []) {
      const state = this.users.get(id);
      if (state) out.add(state);
    }
    return out;
  }

  private applyMembership(state: UserState, event: AxidEvent) {
    const { data } = event;
    switch (event.type) {
      case 'channel.member_added':
        if (data.user_id === state.userId) this.join(state, String(data.channel_id));
        break;
      case 'channel.member_removed':
        if (data.user_id === state.userId) this.leave(state, String(data.channel_id));
        break;
      case 'dm.created': {
        const conv = data.conversation as { id: string; member_ids: string[] } | undefined;
        if (conv?.member_ids?.includes(state.userId)) this.join(state, conv.id);
        break;
      }
      case 'channel.created': {
        // The creator is the first member (a private channel is addressed to it).
        const channel = data.channel as { id: string; created_by?: string } | undefined;
        if (channel?.id && channel.created_by === state.userId) this.join(state, channel.id);
        break;
      }
    }
  }

  private join(state: UserState, channelId: string) {
    state.channels?.add(channelId);
    let members = this.channels.get(channelId);
    if (!members) {
      this.channels.set(channelId, (members = new Set()));
      this.watch?.added(channelId);
    }
    members.add(state);
  }

  private leave(state: UserState, channelId: string) {
    state.channels?.delete(channelId);
    const members = this.channels.get(channelId);
    members?.delete(state);
    if (members?.size === 0) {
      this.channels.delete(channelId);
      this.watch?.removed(channelId);
    }
  }

  /** Drops a user's state once nothing uses it (no connection, none being opened). */
  private forget(state: UserState) {
    if (state.connections.size > 0 || state.opening > 0 || this.users.get(state.userId) !== state) return;
    this.users.delete(state.userId);
    const ws = this.workspaces.get(state.workspaceId);
    ws?.delete(state);
    if (ws?.size === 0) this.workspaces.delete(state.workspaceId);
    for (const id of state.channels ?? []) this.leave(state, id);
  }
}

/** The join or leave of `userId` an event tells of, if any (the membership events applyMembership reads). */
function ownMembershipChange(event: AxidEvent, userId: string): { conversationId: string; joined: boolean } | null {
  const { data } = event;
  switch (event.type) {
    case 'channel.member_added':
      return data.user_id === userId ? { conversationId: String(data.channel_id), joined: true } : null;
    case 'channel.member_removed':
      return data.user_id === userId ? { conversationId: String(data.channel_id), joined: false } : null;
    case 'dm.created': {
      const conv = data.conversation as { id: string; member_ids: string[] } | undefined;
      return conv?.member_ids?.includes(userId) ? { conversationId: conv.id, joined: true } : null;
    }
    case 'channel.created': {
      const channel = data.channel as { id: string; created_by?: string } | undefined;
      return channel?.id && channel.created_by === userId ? { conversationId: channel.id, joined: true } : null;
    }
    default:
      return null;
  }
}
