// The client's state, framework-free: users, channels and DMs by id, messages
// by id with one ordered timeline per conversation (and per thread), unread
// sets, typing, pending sends. Fed by REST pages and stream events; views
// subscribe and read. Rules (docs/web.md): upsert by id keeping the later
// edited_at; order by (created_at, id); deletions leave a tombstone so a late
// event cannot bring a message back; unread counts are sets of ids.
import { featuresFor, type Features } from './features.js';
import { TeamState } from './team-chat.js';
import type { Channel, Conversation, Message, User, Workspace } from './types.js';

export type SendState = 'pending' | 'sent' | 'failed';
export interface ShownMessage extends Message {
  state: SendState;
  /** Stable across the pending -> sent swap (the local id of our own sends). */
  key: string;
}

interface Timeline {
  ids: string[];
  cursor: string | null;
  hasMore: boolean;
  loaded: boolean;
  stale: boolean;
  /**
   * A segment of history not connected to the newest (a permalink opened
   * with `around`, level 3): the cursor of the page newer than it, null when
   * the timeline reaches the live end. Live messages are not added to a
   * segment; they are in it when its pages reach them.
   */
  newerCursor: string | null;
  /** Live messages that arrived while detached: added when the segment reaches the live end (they may be newer than its last page). */
  heldLive: Message[];
}

export interface KeyValueStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

export const threadKey = (rootId: string) => `thread:${rootId}`;
export const timelineKeyOf = (m: { channel_id: string; thread_id: string | null }) => (m.thread_id ? threadKey(m.thread_id) : m.channel_id);

const TYPING_MS = 6_000;
let localCounter = 0;

const before = (a: Message, b: Message) => a.created_at < b.created_at || (a.created_at === b.created_at && a.id < b.id);

export class Store {
  me: User | null = null;
  workspace: Workspace | null = null;
  /** What the server offers (lib/features.ts), from its feature level; level 2 until a response says otherwise. */
  features: Features = featuresFor(2);
  users = new Map<string, User>();
  channels = new Map<string, Channel>();
  dms = new Map<string, Conversation>();
  /** Channels the signed-in user belongs to, as far as known (lists, member events). */
  memberOf = new Set<string>();
  messages = new Map<string, ShownMessage>();
  unread = new Map<string, Set<string>>();
  /** The unread messages that mention me, per conversation (a subset of `unread`). */
  mentions = new Map<string, Set<string>>();
  /** Feature level 3: the server's unread and mention counts at load (lists carry them); live ones add to them. */
  serverUnread = new Map<string, { unread: number; mentions: number }>();
  /** Called when a conversation is read here (client.ts tells the server at level 3). */
  onRead: ((conversationId: string, newestId: string) => void) | null = null;
  /** Who has a stream open (feature level 3: init.presence and presence.updated). */
  presence = new Map<string, 'online' | 'offline'>();
  typing = new Map<string, Map<string, number>>();
  /** Level 3: conversation → agent → its working status and when it lapses (agent.status). */
  agentStatus = new Map<string, Map<string, { status: string; until: number }>>();
  /** The conversation on screen and whether its newest message is visible (then it is read). */
  viewing: { id: string; atBottom: boolean } | null = null;
  /** Level 3: user groups, pins, custom emoji (lib/team-chat.ts). */
  team = new TeamState();
  version = 0;
  private timelines = new Map<string, Timeline>();
  private tombstones = new Set<string>();
  private pendingByServerId = new Map<string, string>();
  private listeners = new Set<() => void>();

  constructor(private readonly storage: KeyValueStorage | null = null, private readonly now: () => number = Date.now) {}

  subscribe(listener: () => void) {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  changed() {
    this.version += 1;
    for (const l of this.listeners) l();
  }

  // ---- conversations -------------------------------------------------------

  setUsers(users: User[]) {
    for (const u of users) this.users.set(u.id, u);
  }

  setChannels(channels: Channel[]) {
    this.channels = new Map(channels.map((c) => [c.id, c]));
  }

  upsertChannel(channel: Channel) {
    this.channels.set(channel.id, channel);
  }

  removeChannel(id: string) {
    this.channels.delete(id);
    this.memberOf.delete(id);
    this.timelines.delete(id);
    this.unread.delete(id);
    this.mentions.delete(id);
  }

  isConversation(id: string) {
    return this.channels.has(id) || this.dms.has(id);
  }

  // ---- timelines -----------------------------------------------------------

  timeline(key: string): Timeline {
    let t = this.timelines.get(key);
    if (!t) this.timelines.set(key, (t = { ids: [], cursor: null, hasMore: true, loaded: false, stale: false, newerCursor: null, heldLive: [] }));
    return t;
  }

  hasTimeline(key: string) {
    return this.timelines.has(key);
  }

  /** Messages of a conversation (or `thread:<root>`), oldest first. */
  list(key: string): ShownMessage[] {
    const out: ShownMessage[] = [];
    for (const id of this.timelines.get(key)?.ids ?? []) {
      const m = this.messages.get(id);
      if (m) out.push(m);
    }
    return out;
  }

  /** Ids the server has sent for this timeline (pending local sends left out). */
  serverIds(key: string) {
    return new Set((this.timelines.get(key)?.ids ?? []).filter((id) => this.messages.get(id)?.state === 'sent'));
  }

  /** Adds a page of history (newest first, as the API lists it); `older` pages extend the cursor. */
  addPage(key: string, page: Message[], pagination: { next_cursor: string | null; has_more: boolean }, older: boolean) {
    const t = this.timeline(key);
    for (const m of page) this.upsert(m, { live: false });
    if (older || !t.loaded) {
      t.cursor = pagination.next_cursor;
      t.hasMore = pagination.has_more;
    }
    t.loaded = true;
    t.stale = false;
    this.changed();
  }

  /** Replaces a timeline with a fresh newest page (a gap too long to fill), or with a segment around a message (`prev_cursor` set). */
  resetTimeline(key: string, page: Message[], pagination: { next_cursor: string | null; has_more: boolean; prev_cursor?: string | null }) {
    const t = this.timeline(key);
    const keep = t.ids.filter((id) => this.messages.get(id)?.state !== 'sent');
    for (const id of t.ids) if (!keep.includes(id)) this.messages.delete(id);
    t.ids = keep;
    t.loaded = false;
    t.newerCursor = pagination.prev_cursor ?? null;
    t.heldLive = [];
    this.addPage(key, page, pagination, false);
  }

  /** Adds the page newer than a segment (`after`); its prev_cursor null: the segment reached the live end. */
  addNewerPage(key: string, page: Message[], pagination: { prev_cursor?: string | null }) {
    const t = this.timeline(key);
    for (const m of page) this.upsert(m, { live: false });
    t.newerCursor = pagination.prev_cursor ?? null;
    if (t.newerCursor === null) {
      // Counted as unread when they arrived; the ones the last page has are already in.
      for (const m of t.heldLive) this.upsert(m, { live: false });
      t.heldLive = [];
    }
    this.changed();
  }

  /**
   * Inserts or updates a message. Returns true when it is new to the client.
   * `live` marks messages from the stream (they may count as unread).
   */
  upsert(m: Message, { live }: { live: boolean }): boolean {
    if (this.tombstones.has(m.id)) return false;
    const prev = this.messages.get(m.id);
    if (prev && prev.edited_at && (!m.edited_at || m.edited_at < prev.edited_at)) return false;
    const key = timelineKeyOf(m);
    // Our own message whose POST has not answered yet: it replaces the pending entry in place.
    const localId = this.pendingByServerId.get(m.id) ?? (prev ? null : this.matchPending(key, m));
    if (localId) {
      this.pendingByServerId.set(m.id, localId);
      this.dropFromTimeline(key, localId);
      this.messages.delete(localId);
    }
    // A segment far back (newerCursor) does not take live messages: they are not next to what it holds.
    const segment = this.timelines.get(key);
    if (live && !prev && !localId && segment?.newerCursor) {
      segment.heldLive.push(m);
      if (m.thread_id) this.countReply(m);
      else if (m.author_id !== this.me?.id) this.noteUnread(m);
      return true;
    }
    this.messages.set(m.id, { ...m, state: 'sent', key: prev?.key ?? localId ?? m.id });
    if (prev) return false;
    this.insertSorted(key, m.id);
    // A page's replies are already counted in the root's `thread`; a new one (live, or our own just sent) is not.
    if (m.thread_id && (live || localId)) this.countReply(m);
    if (live && !m.thread_id && m.author_id !== this.me?.id) this.noteUnread(m);
    return true;
  }

  private countReply(reply: Message) {
    const root = this.messages.get(reply.thread_id!);
    if (root) this.messages.set(root.id, { ...root, thread: { reply_count: (root.thread?.reply_count ?? 0) + 1, last_reply_at: reply.created_at } });
  }

  private matchPending(key: string, m: Message) {
    if (m.author_id !== this.me?.id) return null;
    for (const id of this.timelines.get(key)?.ids ?? []) {
      const p = this.messages.get(id);
      if (p && p.state === 'pending' && p.content === m.content) return id;
    }
    return null;
  }

  private insertSorted(key: string, id: string) {
    const t = this.timeline(key);
    const m = this.messages.get(id)!;
    // Unsent messages stay last; sent ones go by (created_at, id), found by binary search.
    let hi = t.ids.length;
    while (hi > 0 && this.messages.get(t.ids[hi - 1]!)?.state !== 'sent') hi -= 1;
    if (m.state !== 'sent') return void t.ids.push(id);
    let lo = 0;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (before(this.messages.get(t.ids[mid]!)!, m)) lo = mid + 1;
      else hi = mid;
    }
    t.ids.splice(lo, 0, id);
  }

  private dropFromTimeline(key: string, id: string) {
    const t = this.timelines.get(key);
    if (!t) return;
    const i = t.ids.indexOf(id);
    if (i >= 0) t.ids.splice(i, 1);
  }

  /** A streamed reply grows (level 3, message.appended); message.updated with streaming false ends it. */
  append(messageId: string, delta: string) {
    const m = this.messages.get(messageId);
    if (m && typeof delta === 'string') this.messages.set(messageId, { ...m, content: m.content + delta, content_json: null });
  }

  remove(messageId: string) {
    this.tombstones.add(messageId);
    const m = this.messages.get(messageId);
    if (!m) return;
    this.messages.delete(messageId);
    this.dropFromTimeline(timelineKeyOf(m), messageId);
    this.unread.get(m.channel_id)?.delete(messageId);
    this.mentions.get(m.channel_id)?.delete(messageId);
    if (m.thread_id) {
      const root = this.messages.get(m.thread_id);
      if (root?.thread) root.thread = root.thread.reply_count > 1 ? { ...root.thread, reply_count: root.thread.reply_count - 1 } : null;
    }
  }

  /** Removes known messages that a contiguous fresh page range no longer holds (deleted while we were away). */
  pruneMissing(key: string, fresh: Message[]) {
    if (!fresh.length) return;
    const oldest = fresh.reduce((a, b) => (before(a, b) ? a : b));
    const ids = new Set(fresh.map((m) => m.id));
    for (const m of this.list(key)) {
      if (m.state === 'sent' && !ids.has(m.id) && !before(m, oldest)) this.remove(m.id);
    }
  }

  // ---- sending -------------------------------------------------------------

  addPending(channelId: string, content: string, threadId: string | null): string {
    const localId = `local-${this.now()}-${++localCounter}`;
    const m: ShownMessage = {
      id: localId,
      key: localId,
      state: 'pending',
      channel_id: channelId,
      author_id: this.me?.id ?? null,
      content,
      content_json: null,
      metadata: null,
      thread_id: threadId,
      thread: null,
      reactions: [],
      card_origin: null,
      mentioned_user_ids: [],
      display: null,
      webhook_id: null,
      created_at: new Date(this.now()).toISOString(),
      edited_at: null,
    };
    this.messages.set(localId, m);
    this.timeline(timelineKeyOf(m)).ids.push(localId);
    this.changed();
    return localId;
  }

  /** The POST answered: the server's copy takes the pending entry's place (or already did, from the event). */
  resolvePending(localId: string, m: Message) {
    this.pendingByServerId.set(m.id, localId);
    const pending = this.messages.get(localId);
    if (pending) {
      this.dropFromTimeline(timelineKeyOf(pending), localId);
      this.messages.delete(localId);
    }
    this.upsert(m, { live: false });
    this.changed();
  }

  failPending(localId: string) {
    const p = this.messages.get(localId);
    if (p) p.state = 'failed';
    this.changed();
  }

  discardPending(localId: string) {
    const p = this.messages.get(localId);
    if (p) this.dropFromTimeline(timelineKeyOf(p), localId);
    this.messages.delete(localId);
    this.changed();
  }

  // ---- reactions -----------------------------------------------------------

  addReaction(messageId: string, emoji: string, userId: string) {
    const m = this.messages.get(messageId);
    if (!m) return;
    const r = m.reactions.find((x) => x.emoji === emoji);
    if (r?.user_ids.includes(userId)) return;
    const reactions = r
      ? m.reactions.map((x) => (x === r ? { ...x, count: x.count + 1, user_ids: [...x.user_ids, userId] } : x))
      : [...m.reactions, { emoji, count: 1, user_ids: [userId] }];
    this.messages.set(messageId, { ...m, reactions });
  }

  removeReaction(messageId: string, emoji: string, userId: string) {
    const m = this.messages.get(messageId);
    const r = m?.reactions.find((x) => x.emoji === emoji);
    if (!m || !r || !r.user_ids.includes(userId)) return;
    const reactions = m.reactions
      .map((x) => (x === r ? { ...x, count: x.count - 1, user_ids: x.user_ids.filter((u) => u !== userId) } : x))
      .filter((x) => x.count > 0);
    this.messages.set(messageId, { ...m, reactions });
  }

  // ---- typing --------------------------------------------------------------

  setTyping(conversationId: string, userId: string) {
    if (userId === this.me?.id) return;
    let users = this.typing.get(conversationId);
    if (!users) this.typing.set(conversationId, (users = new Map()));
    users.set(userId, this.now() + TYPING_MS);
  }

  clearTyping(conversationId: string, userId: string | null) {
    if (userId) this.typing.get(conversationId)?.delete(userId);
  }

  typingIn(conversationId: string): string[] {
    const now = this.now();
    return [...(this.typing.get(conversationId) ?? [])].filter(([, until]) => until > now).map(([id]) => id);
  }

  // ---- agents' working status (level 3: agent.status) ----------------------

  /** Shows an agent's status in a conversation until its expires_at; "" (or a post by the agent) ends it. */
  setAgentStatus(conversationId: string, userId: string, status: string, expiresAt: string) {
    let users = this.agentStatus.get(conversationId);
    if (!users) this.agentStatus.set(conversationId, (users = new Map()));
    const until = Date.parse(expiresAt);
    if (!status || !(until > this.now())) users.delete(userId);
    else users.set(userId, { status, until });
  }

  clearAgentStatus(conversationId: string, userId: string | null) {
    if (userId) this.agentStatus.get(conversationId)?.delete(userId);
  }

  /** The agents working in a conversation, and what they say they are doing. */
  agentStatusesIn(conversationId: string): { userId: string; status: string }[] {
    const now = this.now();
    return [...(this.agentStatus.get(conversationId) ?? [])].filter(([, s]) => s.until > now).map(([userId, s]) => ({ userId, status: s.status }));
  }

  // ---- ephemeral messages (level 3: message.ephemeral) ---------------------

  /** Messages only this person sees, by timeline key (conversation or thread), oldest first; in memory only, so a reload forgets them, as in Slack. */
  ephemeral = new Map<string, Message[]>();

  addEphemeral(m: Message) {
    const key = timelineKeyOf(m);
    this.ephemeral.set(key, [...(this.ephemeral.get(key) ?? []).filter((e) => e.id !== m.id), m]);
  }

  dismissEphemeral(key: string, id: string) {
    this.ephemeral.set(key, (this.ephemeral.get(key) ?? []).filter((e) => e.id !== id));
    this.changed();
  }

  // ---- unread --------------------------------------------------------------

  /** Feature level 3: the server's read mark of a conversation (lists carry it), else null. */
  lastReadId(conversationId: string): string | null {
    const c = (this.channels.get(conversationId) ?? this.dms.get(conversationId)) as { last_read_message_id?: string | null } | undefined;
    return c?.last_read_message_id ?? null;
  }

  lastReadAt(conversationId: string): string {
    return this.storage?.getItem(`lastRead:${conversationId}`) ?? '';
  }

  private noteUnread(m: Message) {
    if (this.viewing?.id === m.channel_id && this.viewing.atBottom) return this.markRead(m.channel_id);
    if (m.created_at <= this.lastReadAt(m.channel_id)) return;
    let set = this.unread.get(m.channel_id);
    if (!set) this.unread.set(m.channel_id, (set = new Set()));
    set.add(m.id);
    if (this.mentionsMe(m)) {
      let mentions = this.mentions.get(m.channel_id);
      if (!mentions) this.mentions.set(m.channel_id, (mentions = new Set()));
      mentions.add(m.id);
    }
  }

  mentionsMe(m: Pick<Message, 'mentioned_user_ids'>) {
    return Boolean(this.me && m.mentioned_user_ids?.includes(this.me.id));
  }

  /** Counts unread messages in a newest page fetched at start (those after the last visit). */
  countUnread(conversationId: string, page: Message[]) {
    const since = this.lastReadAt(conversationId);
    if (!since) return; // never opened here: nothing to compare with
    const fresh = page.filter((m) => m.created_at > since && m.author_id !== this.me?.id && !m.thread_id);
    if (fresh.length) this.unread.set(conversationId, new Set(fresh.map((m) => m.id)));
    const mentions = fresh.filter((m) => this.mentionsMe(m));
    if (mentions.length) this.mentions.set(conversationId, new Set(mentions.map((m) => m.id)));
  }

  unreadCount(conversationId: string) {
    return (this.serverUnread.get(conversationId)?.unread ?? 0) + (this.unread.get(conversationId)?.size ?? 0);
  }

  mentionCount(conversationId: string) {
    return (this.serverUnread.get(conversationId)?.mentions ?? 0) + (this.mentions.get(conversationId)?.size ?? 0);
  }

  /** Unread messages in every conversation (the tab title's count). */
  totalUnread() {
    let n = 0;
    for (const id of new Set([...this.unread.keys(), ...this.serverUnread.keys()])) n += this.unreadCount(id);
    return n;
  }

  /** Level 3: the read state the server sent with channel and DM objects (none at level 2). */
  setServerReadState(objects: { id: string; unread_count?: number; mention_count?: number }[]) {
    for (const o of objects) {
      if (o.unread_count === undefined) continue;
      // What the server counted replaces what this tab counted for the same messages.
      this.unread.delete(o.id);
      this.mentions.delete(o.id);
      if (o.unread_count || o.mention_count) this.serverUnread.set(o.id, { unread: o.unread_count, mentions: o.mention_count ?? 0 });
      else this.serverUnread.delete(o.id);
    }
  }

  /** Another tab or device read up to `messageId` (event channel.read): what is not newer is read here too. */
  readElsewhere(conversationId: string, messageId: string) {
    const c = (this.channels.get(conversationId) ?? this.dms.get(conversationId)) as { last_read_message_id?: string | null } | undefined;
    if (c) c.last_read_message_id = messageId;
    const mark = this.messages.get(messageId);
    this.serverUnread.delete(conversationId);
    if (!mark) {
      this.unread.delete(conversationId);
      this.mentions.delete(conversationId);
      return;
    }
    for (const set of [this.unread.get(conversationId), this.mentions.get(conversationId)]) {
      for (const id of set ?? []) {
        const m = this.messages.get(id);
        if (!m || !before(mark, m)) set!.delete(id);
      }
    }
  }

  markRead(conversationId: string) {
    const sent = this.list(conversationId).filter((m) => m.state === 'sent');
    const newest = sent.at(-1)?.created_at ?? new Date(this.now()).toISOString();
    if (newest > this.lastReadAt(conversationId)) this.storage?.setItem(`lastRead:${conversationId}`, newest);
    this.unread.delete(conversationId);
    this.mentions.delete(conversationId);
    this.serverUnread.delete(conversationId);
    const last = sent.at(-1);
    if (last) this.onRead?.(conversationId, last.id);
  }

  markStale(exceptKeys: Set<string>) {
    for (const [key, t] of this.timelines) if (!exceptKeys.has(key)) t.stale = true;
  }
}
