// The app's controller, framework-free: signs in and out, loads the
// workspace into the store, runs the stream and the catch-up after each
// reconnect, and performs the user's actions. Views call it and read the store.
import { ApiError, createApi, data, errorMessage, page, all, uploadFile, type Api } from './api.js';
import { browserKeyRequest, loadSession, saveSession, type SavedSession } from './session.js';
import { featuresFor } from './features.js';
import { applyTheme, Prefs, shouldNotify, type Theme } from './prefs.js';
import { messagePath } from './routes.js';
import { LiveStream, type StreamState } from './stream.js';
import { Store, threadKey, type KeyValueStorage } from './store.js';
import { Sync } from './sync.js';
import { TeamActions } from './team-chat.js';
import { FILE_METADATA_TYPE, type ApiKey, type Channel, type ChannelMember, type Conversation, type FileInfo, type FollowedThread, type Message, type Page, type User, type Workspace } from './types.js';

type Storage = KeyValueStorage & { removeItem(k: string): void };

export interface ClientEnv {
  origin: string;
  storage: Storage;
  userAgent: string;
  fetch?: typeof fetch;
  /** The conversation the address names (ui/app.tsx routes): its newest page is asked for as soon as the lists say what it is. */
  openFirst?(): string | null;
}

const PAGE = 50;
/** Opening a message far back in history (jumpTo): pages of the API's largest size, at most this many per timeline (10,000 messages). */
const JUMP_PAGE = 200;
const JUMP_PAGES = 50;

class JumpError extends Error {}
/** Conversations whose newest page is fetched at start (for unread counts). */
const PRIME_LIMIT = 30;

export interface SendOptions {
  threadId?: string | null;
  contentJson?: unknown;
  metadata?: Message['metadata'];
  /** A retry's: its first attempt's key, so the server posts it once (level 3). */
  idempotencyKey?: string;
}

export class AxidClient {
  readonly store: Store;
  readonly api: Api;
  readonly prefs: Prefs;
  /** Level 3: user groups, pins, browsing and archiving channels, custom emoji (lib/team-chat.ts). */
  readonly team: TeamActions;
  session: SavedSession | null;
  streamState: StreamState = 'stopped';
  streamRetryInMs = 0;
  /** Why the user is on the sign-in screen (a refused key), shown there. */
  signedOutReason: string | null = null;
  openConversation: string | null = null;
  openThread: string | null = null;
  /**
   * The message a permalink or a search result opened: scrolled to and
   * highlighted once its history is loaded (`rootId`, for a reply, is the
   * thread's root in the conversation's timeline; `seq` tells a second jump
   * to the same message from the first).
   */
  highlight: { id: string; rootId: string | null; seq: number } | null = null;
  /** Why the last jump could not show its message (plain words), else null. */
  jumpProblem: string | null = null;
  private jumps = 0;
  private loadingOlder = new Map<string, Promise<void>>();
  private loadingNewer = new Map<string, Promise<void>>();
  private newest = new Map<string, Promise<void>>();
  private stream: LiveStream | null = null;
  private sync: Sync;
  private seenInit = false;
  private lastTypingSent = 0;
  private readSent = new Map<string, string>();
  /** Whether the last reconnect resumed (level 3 replay) rather than polled; null before any reconnect. */
  lastResumed: boolean | null = null;
  /** The server's X-Service-Feature-Level as last seen; views read store.features, derived from it once. */
  private level = 2;

  constructor(private readonly env: ClientEnv) {
    this.store = new Store(env.storage);
    this.prefs = new Prefs(env.storage);
    this.session = loadSession(env.storage);
    this.api = createApi(env.origin, {
      key: () => this.session?.key ?? null,
      onLevel: (level) => {
        if (level !== this.level) {
          this.level = level;
          this.store.features = featuresFor(level);
          this.store.changed();
        }
      },
      onUnauthorized: (code, message) => this.signedOut(code, message),
    });
    // At level 3 reading is told to the server, so other tabs and devices follow (channel.read).
    this.store.onRead = (conversationId, newestId) => {
      if (!this.store.features.readState || this.readSent.get(conversationId) === newestId) return;
      this.readSent.set(conversationId, newestId);
      const path = { channel_id: conversationId, conversation_id: conversationId };
      const body = { message_id: newestId };
      void (this.isDm(conversationId)
        ? this.api.POST('/api/v1/dms/{conversation_id}/read', { params: { path }, body })
        : this.api.POST('/api/v1/channels/{channel_id}/read', { params: { path }, body })
      ).catch(() => this.readSent.delete(conversationId));
    };
    this.team = new TeamActions(this.api, this.store, (id) => this.isDm(id));
    this.sync = new Sync(
      this.store,
      (key, cursor) => this.fetchPage(key, cursor, PAGE),
      () => [this.openConversation, this.openThread ? threadKey(this.openThread) : null].filter((k): k is string => Boolean(k)),
    );
  }

  /** The tab's localStorage (drafts, per-browser preferences). */
  get storage(): Storage {
    return this.env.storage;
  }

  get key() {
    return this.session?.key ?? null;
  }

  // ---- session -------------------------------------------------------------

  /**
   * Uses the pasted key once to create this browser's own key, and keeps only
   * that one. A key from a sign-in link (`/#key=`) is then revoked: the link is
   * one-time, so the copy left in the browser's history or wherever the link
   * was pasted is dead (docs/decisions.md, "Sign-in links"). A key pasted into
   * the form is the person's to keep.
   */
  async signIn(pastedKey: string, o: { fromLink?: boolean } = {}) {
    const key = pastedKey.trim();
    const probe = createApi(this.env.origin, { key: () => key, onLevel: () => undefined, onUnauthorized: () => undefined });
    await data(probe.GET('/api/v1/users/me'));
    const created = await data(probe.POST('/api/v1/api-keys', { body: browserKeyRequest(this.env.userAgent) }));
    // Revoked with the new key, not itself: at level 3 the new key is the link key's child, and a key
    // revoking its own parent keeps its own branch (revoking the link key with itself would end both).
    if (o.fromLink) await revokeKey(createApi(this.env.origin, { key: () => created.key!, onLevel: () => undefined, onUnauthorized: () => undefined }), key);
    await this.adoptKey({ key: created.key!, id: created.id, name: created.name });
  }

  /** Keeps a 30-day key the API made for this browser (password, invite, single sign-on: lib/sign-in.ts) and starts. */
  async adoptKey(issued: { key: string; id: string; name: string }) {
    this.session = { key: issued.key, keyId: issued.id, name: issued.name };
    saveSession(this.env.storage, this.session);
    this.signedOutReason = null;
    await this.start();
  }

  async signOut() {
    const s = this.session;
    this.stop();
    if (s) await this.api.DELETE('/api/v1/api-keys/{key_id}', { params: { path: { key_id: s.keyId } }, headers: { Authorization: `Bearer ${s.key}` } }).catch(() => undefined);
    this.session = null;
    saveSession(this.env.storage, null);
    this.signedOutReason = null;
    this.store.changed();
  }

  private signedOut(code: string, message: string) {
    if (!this.session) return;
    this.stop();
    this.session = null;
    saveSession(this.env.storage, null);
    this.signedOutReason = code === 'key_expired' ? `Your browser key has expired (${message}). Sign in again.` : `Your browser key was revoked or is no longer valid (${message}). Sign in again.`;
    this.store.changed();
  }

  stop() {
    this.stream?.stop();
    this.stream = null;
    this.seenInit = false;
  }

  // ---- loading -------------------------------------------------------------

  async start() {
    const s = this.store;
    const [me, workspace, users, channels, dms] = await Promise.all([
      data(this.api.GET('/api/v1/users/me')),
      data(this.api.GET('/api/v1/workspaces/current')),
      all((cursor) => page(this.api.GET('/api/v1/users', { params: { query: { cursor, limit: 200 } } }))),
      all((cursor) => page(this.api.GET('/api/v1/channels', { params: { query: { cursor, limit: 200 } } }))),
      all((cursor) => page(this.api.GET('/api/v1/dms', { params: { query: { cursor, limit: 200 } } }))),
    ]);
    s.me = me;
    s.workspace = workspace;
    s.setUsers(users);
    s.setChannels(channels);
    s.dms = new Map(dms.map((d) => [d.id, d]));
    s.setServerReadState([...channels, ...dms]);
    // The first paint waits for the open conversation's page: it goes out now, beside the membership reads, not after them.
    const first = this.env.openFirst?.() ?? null;
    const firstPage = first && s.isConversation(first) ? this.loadNewest(first).catch(() => undefined) : null;
    // The open channel's membership (Join or the composer) is asked for first, ahead of the others in the queue.
    await this.loadMemberships([...channels].sort((a, b) => Number(b.id === first) - Number(a.id === first)));
    s.changed();
    void this.loadPrefs();
    void this.team.load();
    this.startStream();
    // The unread counts' pages wait for it too, so they do not queue in front of it (six connections per host).
    void Promise.resolve(firstPage).then(() => this.primeUnread());
  }

  private async loadMemberships(channels: Channel[]) {
    const me = this.store.me!.id;
    await Promise.all(
      channels.map(async (c) => {
        const members = await this.channelMembers(c.id).catch(() => []);
        if (members.some((m) => m.user_id === me)) this.store.memberOf.add(c.id);
      }),
    );
  }

  private async primeUnread() {
    const ids = [...[...this.store.channels.keys()].filter((id) => this.store.memberOf.has(id)), ...this.store.dms.keys()].slice(0, PRIME_LIMIT);
    await Promise.all(
      ids.map(async (id) => {
        if (this.store.timeline(id).loaded || this.newest.has(id)) return;
        const p = await this.fetchPage(id, null, PAGE).catch(() => null);
        if (!p) return;
        this.store.addPage(id, p.data, p.pagination, false);
        // At level 3 the server counted (setServerReadState); below, this browser's own record does.
        if (id !== this.openConversation && !this.store.features.readState) this.store.countUnread(id, p.data);
      }),
    );
    this.store.changed();
  }

  private startStream() {
    this.stream?.stop();
    this.seenInit = false;
    this.stream = new LiveStream({
      url: `${this.env.origin}/api/v1/stream`,
      fetch: this.env.fetch,
      key: () => this.key,
      onInit: (init) => {
        // Feature level 3 lists who is online (contract §9); everyone else is offline.
        if (init.presence && typeof init.presence === 'object') {
          this.store.presence = new Map(Object.keys(init.presence as object).map((id) => [id, 'online' as const]));
        }
        const reconnect = this.seenInit;
        const resumed = init.resumed === true;
        this.seenInit = true;
        this.lastResumed = reconnect ? resumed : null;
        if (reconnect && !resumed) void (this.refreshLists(), this.loadPrefs(), this.team.load());
        void this.sync.onInit(reconnect, resumed);
        if (reconnect) this.retryUnsent();
      },
      onEvent: (type, payload) => {
        this.sync.onEvent(type, payload);
        if (type === 'message.created') this.notify(payload.message as Message);
      },
      onState: (state, detail) => {
        this.streamState = state;
        this.streamRetryInMs = detail?.retryInMs ?? 0;
        this.store.changed();
      },
      onUnauthorized: (code, message) => this.signedOut(code, message),
    });
    this.stream.start();
  }

  /** The browser went offline. */
  dropStream() {
    this.stream?.dropNow();
  }

  /** The browser is online again or the tab woke up. */
  reconnectNow() {
    this.stream?.reconnectNow();
  }

  private async refreshLists() {
    const [channels, dms] = await Promise.all([
      all((cursor) => page(this.api.GET('/api/v1/channels', { params: { query: { cursor, limit: 200 } } }))),
      all((cursor) => page(this.api.GET('/api/v1/dms', { params: { query: { cursor, limit: 200 } } }))),
    ]).catch(() => [null, null]);
    if (channels) this.store.setChannels(channels);
    if (dms) this.store.dms = new Map(dms.map((d) => [d.id, d]));
    this.store.setServerReadState([...(channels ?? []), ...(dms ?? [])]);
    this.store.changed();
  }

  private isDm(id: string) {
    return this.store.dms.has(id);
  }

  /** A page of a timeline: a conversation's top-level messages or a thread's replies. */
  fetchPage(key: string, cursor: string | null, limit: number, from: { after?: string; around?: string } = {}): Promise<Page<Message>> {
    const thread = key.startsWith('thread:') ? key.slice('thread:'.length) : null;
    const conversation = thread ? this.store.messages.get(thread)?.channel_id : key;
    if (!conversation) return Promise.resolve({ data: [], pagination: { next_cursor: null, has_more: false } });
    const query = { limit, ...(cursor ? { cursor } : {}), ...(thread ? { thread_id: thread } : {}), ...from };
    return this.isDm(conversation)
      ? page(this.api.GET('/api/v1/dms/{conversation_id}/messages', { params: { path: { conversation_id: conversation }, query } }))
      : page(this.api.GET('/api/v1/channels/{channel_id}/messages', { params: { path: { channel_id: conversation }, query } }));
  }

  async open(conversationId: string) {
    const threadShown = this.openThread !== null;
    // What went wrong opening a message belongs to that address (a jump there sets it again).
    this.jumpProblem = null;
    this.openConversation = conversationId;
    this.openThread = null;
    // Views route by address, not by openConversation: only a closing thread panel needs a render.
    if (threadShown) this.store.changed();
    // Level 3: an archived channel is not in the lists; its address (a link, a pin, Browse channels) still opens it.
    if (!this.store.isConversation(conversationId)) await this.team.findChannel(conversationId);
    await this.loadNewest(conversationId);
    if (this.store.channels.has(conversationId) && !this.store.memberOf.has(conversationId)) {
      await this.loadMemberships([this.store.channels.get(conversationId)!]);
      this.store.changed();
    }
  }

  /** A conversation's newest page, when it has none or a stale one; a call while one is on its way waits for that one. */
  private loadNewest(conversationId: string): Promise<void> {
    const t = this.store.timeline(conversationId);
    if (t.loaded && !t.stale) return Promise.resolve();
    let running = this.newest.get(conversationId);
    if (!running) {
      running = this.fetchPage(conversationId, null, PAGE)
        .then((p) => (t.stale ? this.store.resetTimeline(conversationId, p.data, p.pagination) : this.store.addPage(conversationId, p.data, p.pagination, false)))
        .finally(() => this.newest.delete(conversationId));
      this.newest.set(conversationId, running);
    }
    return running;
  }

  /** The next older page of a timeline; a call while one is on its way waits for that one. */
  loadOlder(key: string, limit = PAGE): Promise<void> {
    const t = this.store.timeline(key);
    if (!t.hasMore || !t.loaded) return Promise.resolve();
    let running = this.loadingOlder.get(key);
    if (!running) {
      running = this.fetchPage(key, t.cursor, limit)
        .then((p) => this.store.addPage(key, p.data, p.pagination, true))
        .finally(() => this.loadingOlder.delete(key));
      this.loadingOlder.set(key, running);
    }
    return running;
  }

  /** The page newer than a segment far back (level 3, `after`); a call while one is on its way waits for that one. */
  loadNewer(key: string): Promise<void> {
    const t = this.store.timeline(key);
    if (!t.newerCursor) return Promise.resolve();
    let running = this.loadingNewer.get(key);
    if (!running) {
      running = this.fetchPage(key, null, PAGE, { after: t.newerCursor })
        .then((p) => this.store.addNewerPage(key, p.data, p.pagination))
        .finally(() => this.loadingNewer.delete(key));
      this.loadingNewer.set(key, running);
    }
    return running;
  }

  /** Leaves a segment far back for the newest page ("Jump to newest"). */
  async jumpToNewest(key: string) {
    const p = await this.fetchPage(key, null, PAGE);
    this.store.resetTimeline(key, p.data, p.pagination);
  }

  /**
   * Opens a message where it lives (a permalink, a search result): its
   * conversation, and its thread when it is a reply, with history paged back
   * until it is loaded, then highlighted (ui/timeline.tsx scrolls to it).
   * At level 2 the API lists history only backwards from the newest message
   * (no page "around" a message), so this pages back with `cursor`,
   * JUMP_PAGE messages at a time, at most JUMP_PAGES pages per timeline. At
   * level 3 one page `around` the message replaces the timeline instead
   * (aroundTo), however far back it is.
   */
  async jumpTo(conversationId: string, messageId: string) {
    const seq = ++this.jumps;
    this.jumpProblem = null;
    try {
      const m = this.store.messages.get(messageId) ?? (await this.fetchMessage(conversationId, messageId));
      if (seq !== this.jumps) return;
      this.highlight = { id: m.id, rootId: m.thread_id, seq };
      this.store.changed();
      const reach = this.store.features.historyAround ? this.aroundTo.bind(this) : this.pageBackTo.bind(this);
      const found = await reach(conversationId, m.thread_id ?? m.id, m.thread_id ? null : m.created_at);
      if (m.thread_id) {
        await this.openThreadOf(m.thread_id);
        if (!(await reach(threadKey(m.thread_id), m.id, m.created_at))) throw new JumpError();
      } else if (!found) throw new JumpError();
    } catch (err) {
      if (seq !== this.jumps) return;
      this.jumpProblem =
        err instanceof JumpError
          ? 'That message is further back than the app loads at once. Scroll up to reach it.'
          : err instanceof ApiError && err.status === 404
            ? 'That message was deleted, or you cannot see it.'
            : errorMessage(err);
    }
    this.store.changed();
  }

  /** Pages a timeline back until it holds `id` (true) or cannot hold it: older than `createdAt`, the start, or the bound. */
  private async pageBackTo(key: string, id: string, createdAt: string | null) {
    const t = this.store.timeline(key);
    if (!t.loaded) {
      const p = await this.fetchPage(key, null, PAGE);
      this.store.addPage(key, p.data, p.pagination, false);
    }
    if (t.ids.includes(id)) return true;
    // The pages are gathered first and added together, so the list renders once, not once per page.
    const gathered: Page<Message>[] = [];
    let found = false;
    let oldest = this.store.messages.get(t.ids[0] ?? '')?.created_at ?? null;
    for (let cursor = t.hasMore ? t.cursor : null; cursor && !found && !(createdAt && oldest && oldest < createdAt) && gathered.length < JUMP_PAGES; ) {
      const p = await this.fetchPage(key, cursor, JUMP_PAGE);
      gathered.push(p);
      found = p.data.some((m) => m.id === id);
      oldest = p.data.at(-1)?.created_at ?? oldest;
      cursor = p.pagination.has_more ? p.pagination.next_cursor : null;
    }
    for (const p of gathered) this.store.addPage(key, p.data, p.pagination, true);
    return found;
  }

  /** Level 3: a timeline that does not hold `id` becomes the page around it (a segment: newer pages load on scrolling down). */
  private async aroundTo(key: string, id: string) {
    if (this.store.timeline(key).ids.includes(id)) return true;
    const p = await this.fetchPage(key, null, PAGE * 2, { around: id });
    this.store.resetTimeline(key, p.data, p.pagination);
    return p.data.some((m) => m.id === id);
  }

  private fetchMessage(conversationId: string, messageId: string): Promise<Message> {
    const path = { channel_id: conversationId, conversation_id: conversationId, message_id: messageId };
    return this.isDm(conversationId)
      ? data(this.api.GET('/api/v1/dms/{conversation_id}/messages/{message_id}', { params: { path } }))
      : data(this.api.GET('/api/v1/channels/{channel_id}/messages/{message_id}', { params: { path } }));
  }

  async openThreadOf(rootId: string) {
    this.openThread = rootId;
    this.store.changed();
    const key = threadKey(rootId);
    const t = this.store.timeline(key);
    if (!t.loaded || t.stale) {
      const p = await this.fetchPage(key, null, 200);
      this.store.resetTimeline(key, p.data, p.pagination);
    }
  }

  closeThread() {
    this.openThread = null;
    this.store.changed();
  }

  // ---- notifications -----------------------------------------------------------

  /** Asks the browser for permission (call it from a click, never on load); true when granted. */
  async enableNotifications() {
    if (typeof Notification === 'undefined') return false;
    const permission = Notification.permission === 'granted' ? 'granted' : await Notification.requestPermission();
    this.prefs.notifications = permission === 'granted';
    this.store.changed();
    return permission === 'granted';
  }

  disableNotifications() {
    this.prefs.notifications = false;
    this.store.changed();
  }

  setMuted(conversationId: string, on: boolean) {
    this.prefs.setMuted(conversationId, on);
    this.store.changed();
    void this.savePrefs({ muted_conversation_ids: [...this.prefs.muted()] });
  }

  setTheme(theme: Theme) {
    this.prefs.theme = theme;
    applyTheme(theme);
    this.store.changed();
    void this.savePrefs({ theme });
  }

  /**
   * Level 3: the person's preferences kept on the server (muted conversations,
   * theme) replace this browser's copy, so they follow the person across
   * devices; below, they stay in this browser only. Read at start and after a reconnect.
   */
  private async loadPrefs() {
    if (!this.store.features.serverPrefs) return;
    const saved = await data(this.api.GET('/api/v1/users/me/preferences')).catch(() => null);
    if (!saved) return;
    this.prefs.setAllMuted(saved.muted_conversation_ids);
    if (saved.updated_at !== null && saved.theme !== this.prefs.theme) {
      this.prefs.theme = saved.theme;
      applyTheme(saved.theme);
    }
    this.store.changed();
  }

  private async savePrefs(body: { muted_conversation_ids?: string[]; theme?: Theme }) {
    if (!this.store.features.serverPrefs) return;
    // Kept here at once; a failed save is retried by the next change (the browser's copy is the fallback).
    await data(this.api.PATCH('/api/v1/users/me/preferences', { body })).catch(() => undefined);
  }

  /** A desktop notification for a new message, when lib/prefs.ts shouldNotify says so. */
  private notify(m: Message) {
    const me = this.store.me;
    if (!me || typeof Notification === 'undefined' || Notification.permission !== 'granted' || typeof document === 'undefined') return;
    const ok = shouldNotify({
      enabled: this.prefs.notifications,
      authorId: m.author_id,
      me: me.id,
      mentioned: this.store.mentionsMe(m),
      isDm: this.isDm(m.channel_id),
      muted: this.prefs.isMuted(m.channel_id),
      openHere: this.openConversation === m.channel_id,
      focused: document.hasFocus(),
    });
    if (!ok) return;
    const author = m.display?.username || (m.author_id ? this.store.users.get(m.author_id) : undefined)?.display_name || this.store.users.get(m.author_id ?? '')?.name || 'Someone';
    const where = this.store.channels.get(m.channel_id);
    const n = new Notification(where ? `${author} in #${where.name}` : author, { body: m.content.slice(0, 200), tag: m.id });
    n.onclick = () => {
      window.focus();
      history.pushState(null, '', messagePath(m.channel_id, m.id));
      window.dispatchEvent(new PopStateEvent('popstate'));
      n.close();
    };
  }

  // ---- actions ---------------------------------------------------------------

  private messagesPath(conversationId: string) {
    return this.isDm(conversationId) ? ('dms' as const) : ('channels' as const);
  }

  /**
   * Sends that failed for want of a connection (no answer, or a 5xx), by their
   * pending entry's id: posted again, with all they carried, once the stream is
   * back (onInit). Ones the server refused (4xx) wait for the person.
   */
  private unsent = new Map<string, { conversationId: string; content: string; opts: SendOptions }>();

  async send(conversationId: string, content: string, opts: SendOptions = {}) {
    // A send from a segment far back goes to the live end, where the message will be.
    const key = opts.threadId ? threadKey(opts.threadId) : conversationId;
    if (this.store.timeline(key).newerCursor) await this.jumpToNewest(key);
    const localId = this.store.addPending(conversationId, content, opts.threadId ?? null);
    const body = {
      content,
      ...(opts.contentJson ? { content_json: opts.contentJson } : {}),
      ...(opts.metadata ? { metadata: opts.metadata } : {}),
      ...(opts.threadId ? { thread_id: opts.threadId } : {}),
    };
    // At feature level 3 a retried POST cannot post twice (a retry sends its first attempt's key).
    const headers = this.store.features.idempotentSends ? { 'Idempotency-Key': opts.idempotencyKey ?? localId } : undefined;
    try {
      const m =
        this.messagesPath(conversationId) === 'dms'
          ? await data(this.api.POST('/api/v1/dms/{conversation_id}/messages', { params: { path: { conversation_id: conversationId } }, body, headers }))
          : await data(this.api.POST('/api/v1/channels/{channel_id}/messages', { params: { path: { channel_id: conversationId } }, body, headers }));
      // Sent without send_at, the answer is the posted message (201), never a scheduled one (202).
      this.store.resolvePending(localId, m as Message);
    } catch (err) {
      this.store.failPending(localId);
      if (!(err instanceof ApiError) || err.status === 0 || err.status >= 500) this.unsent.set(localId, { conversationId, content, opts: { ...opts, idempotencyKey: opts.idempotencyKey ?? localId } });
      throw err;
    }
  }

  /** A failed send: post it again (its pending entry goes), with its mentions, thread and metadata. */
  async retry(localId: string) {
    const saved = this.unsent.get(localId);
    this.unsent.delete(localId);
    const failed = this.store.messages.get(localId);
    if (!failed || failed.state !== 'failed') return;
    this.store.discardPending(localId);
    await this.send(failed.channel_id, failed.content, saved?.opts ?? { threadId: failed.thread_id });
  }

  /** Whether a failed send will go by itself once the connection is back. */
  willResend(localId: string) {
    return this.unsent.has(localId);
  }

  /** The connection is back: what could not be sent goes now, in the order it was written. */
  private retryUnsent() {
    for (const id of [...this.unsent.keys()]) void this.retry(id).catch(() => undefined);
  }

  async edit(m: Message, content: string) {
    const updated = await this.messageCall(m, 'PATCH', { content });
    if (updated) this.store.upsert(updated, { live: false });
    this.store.changed();
  }

  /** Level 3: the author removes a message's link previews (PATCH with `unfurls: []`). */
  async removePreviews(m: Message) {
    const updated = await this.messageCall(m, 'PATCH', { unfurls: [] });
    if (updated) this.store.upsert(updated, { live: false });
    this.store.changed();
  }

  async remove(m: Message) {
    await this.messageCall(m, 'DELETE');
    this.store.remove(m.id);
    this.store.changed();
  }

  private async messageCall(m: Message, method: 'PATCH' | 'DELETE', body?: { content: string } | { unfurls: [] }): Promise<Message | null> {
    const path = { channel_id: m.channel_id, conversation_id: m.channel_id, message_id: m.id };
    if (this.isDm(m.channel_id)) {
      if (method === 'PATCH') return data(this.api.PATCH('/api/v1/dms/{conversation_id}/messages/{message_id}', { params: { path }, body: body! }));
      await data(this.api.DELETE('/api/v1/dms/{conversation_id}/messages/{message_id}', { params: { path } }));
      return null;
    }
    if (method === 'PATCH') return data(this.api.PATCH('/api/v1/channels/{channel_id}/messages/{message_id}', { params: { path }, body: body! }));
    await data(this.api.DELETE('/api/v1/channels/{channel_id}/messages/{message_id}', { params: { path } }));
    return null;
  }

  /** Messages matching a web-search query and its filters (feature level 3, contract §9), newest first. */
  async searchMessages(q: string, filters: Record<string, string> = {}): Promise<Message[]> {
    // The filters (lib/search-filters.ts): author_id, channel_id, before, after, has.
    const res = await fetch(`${this.env.origin}/api/v1/search/messages?${new URLSearchParams({ ...(q ? { q } : {}), ...filters, limit: '50' })}`, { headers: { Authorization: `Bearer ${this.key}` } });
    const body = (await res.json().catch(() => null)) as { data?: Message[]; error?: { code?: string; message?: string } } | null;
    if (!res.ok || !body?.data) throw new ApiError(res.status, body?.error?.code ?? 'error', body?.error?.message ?? `${res.status}`);
    return body.data;
  }

  /** Earlier versions of a message, newest first (feature level 3). */
  async editHistory(m: Message) {
    const path = { channel_id: m.channel_id, conversation_id: m.channel_id, message_id: m.id };
    const all = this.isDm(m.channel_id)
      ? await page(this.api.GET('/api/v1/dms/{conversation_id}/messages/{message_id}/edits', { params: { path } }))
      : await page(this.api.GET('/api/v1/channels/{channel_id}/messages/{message_id}/edits', { params: { path } }));
    return all.data as { content: string; edited_at: string; editor_id: string | null }[];
  }

  async toggleReaction(m: Message, emoji: string) {
    const me = this.store.me!.id;
    const mine = m.reactions.some((r) => r.emoji === emoji && r.user_ids.includes(me));
    const path = { channel_id: m.channel_id, conversation_id: m.channel_id, message_id: m.id, emoji };
    const dm = this.isDm(m.channel_id);
    if (mine) {
      await data(
        dm
          ? this.api.DELETE('/api/v1/dms/{conversation_id}/messages/{message_id}/reactions/{emoji}', { params: { path } })
          : this.api.DELETE('/api/v1/channels/{channel_id}/messages/{message_id}/reactions/{emoji}', { params: { path } }),
      );
      this.store.removeReaction(m.id, emoji, me);
    } else {
      await data(
        dm
          ? this.api.POST('/api/v1/dms/{conversation_id}/messages/{message_id}/reactions', { params: { path }, body: { emoji } })
          : this.api.POST('/api/v1/channels/{channel_id}/messages/{message_id}/reactions', { params: { path }, body: { emoji } }),
      );
      this.store.addReaction(m.id, emoji, me);
    }
    this.store.changed();
  }

  /** Tells the others we are typing, at most every 3 s. */
  typing(conversationId: string) {
    const now = Date.now();
    if (now - this.lastTypingSent < 3_000) return;
    this.lastTypingSent = now;
    const call = this.isDm(conversationId)
      ? this.api.POST('/api/v1/dms/{conversation_id}/typing', { params: { path: { conversation_id: conversationId } } })
      : this.api.POST('/api/v1/channels/{channel_id}/typing', { params: { path: { channel_id: conversationId } } });
    void call.catch(() => undefined);
  }

  /** Posts a message that carries an uploaded file (metadata `axid.file`). */
  async sendFile(conversationId: string, file: Pick<FileInfo, 'id' | 'name' | 'size' | 'content_type'>, threadId: string | null) {
    await this.send(conversationId, `Shared a file: ${file.name}`, {
      threadId,
      metadata: { type: FILE_METADATA_TYPE, data: { file_id: file.id, name: file.name, size: file.size, content_type: file.content_type } },
    });
  }

  fileInfo(id: string) {
    return data(this.api.GET('/api/v1/files/{file_id}', { params: { path: { file_id: id } } }));
  }

  private fileLinks = new Map<string, { href: string | null; until: number }>();

  /**
   * A file's download address for an <img> (avatars uploaded through the files
   * API): the signed link lasts 15 minutes, so it is fetched on first need,
   * kept 10 minutes, and the store re-renders when it arrives. Null until then.
   */
  fileLink(fileId: string): string | null {
    const known = this.fileLinks.get(fileId);
    if (known && known.until > Date.now()) return known.href;
    if (!known || known.href !== null) {
      this.fileLinks.set(fileId, { href: known?.href ?? null, until: Date.now() + 600_000 });
      this.fileInfo(fileId).then(
        (f) => (this.fileLinks.set(fileId, { href: sameOriginPath(f.download_url, this.env.origin), until: Date.now() + 600_000 }), this.store.changed()),
        () => undefined,
      );
    }
    return known?.href ?? null;
  }

  /** Uploads a picture and makes it the signed-in person's avatar (an address of this server naming the file). */
  async setAvatar(file: File) {
    const info = await uploadFile(file, this.key!, () => undefined);
    return this.updateProfile({ avatar_url: `${this.env.origin}/api/v1/files/${info.id}` });
  }

  async updateProfile(patch: { display_name?: string | null; avatar_url?: string | null; email_notifications?: 'mentions' | 'never' }) {
    const me = await data(this.api.PATCH('/api/v1/users/me', { body: patch }));
    this.store.me = me;
    this.store.users.set(me.id, me);
    this.store.changed();
    return me;
  }

  // ---- channels and members ----------------------------------------------------

  channelMembers(channelId: string) {
    return all((cursor) => page(this.api.GET('/api/v1/channels/{channel_id}/members', { params: { path: { channel_id: channelId }, query: { cursor, limit: 200 } } })));
  }

  async addMember(channelId: string, userId: string) {
    await data(this.api.POST('/api/v1/channels/{channel_id}/members', { params: { path: { channel_id: channelId } }, body: { user_id: userId } }));
    if (userId === this.store.me?.id) this.store.memberOf.add(channelId);
    this.store.changed();
  }

  async removeMember(channelId: string, userId: string) {
    await data(this.api.DELETE('/api/v1/channels/{channel_id}/members/{user_id}', { params: { path: { channel_id: channelId, user_id: userId } } }));
    if (userId === this.store.me?.id) {
      const c = this.store.channels.get(channelId);
      if (c?.is_private) this.store.removeChannel(channelId);
      else this.store.memberOf.delete(channelId);
    }
    this.store.changed();
  }

  async createChannel(body: { name: string; description?: string; is_private?: boolean; is_default?: boolean; parent_channel_id?: string }) {
    const c = await data(this.api.POST('/api/v1/channels', { body }));
    this.store.upsertChannel(c);
    this.store.memberOf.add(c.id);
    this.store.changed();
    return c;
  }

  async updateChannel(channelId: string, patch: { name?: string; description?: string }) {
    const c = await data(this.api.PATCH('/api/v1/channels/{channel_id}', { params: { path: { channel_id: channelId } }, body: patch }));
    this.store.upsertChannel(c);
    this.store.changed();
    return c;
  }

  async openDm(userIds: string[]) {
    const c = await data(this.api.POST('/api/v1/dms', { body: { user_ids: userIds } }));
    this.store.dms.set(c.id, c);
    this.store.changed();
    return c;
  }

  isAdmin() {
    const role = this.store.me?.role;
    return role === 'owner' || role === 'admin';
  }

  // ---- habits (issue 34): followed threads, all unreads, Up to edit ----------

  /**
   * The message the Up arrow in an empty composer asked to edit: its
   * MessageItem opens its edit box and clears this (ui/message.tsx).
   */
  editRequest: string | null = null;

  /** Opens the edit box of the person's last sent message in a timeline; false when there is none. */
  editLastOwn(key: string): boolean {
    const me = this.store.me?.id;
    const last = this.store.list(key).findLast((m) => m.author_id === me && m.state === 'sent');
    if (!last) return false;
    this.editRequest = last.id;
    this.store.changed();
    return true;
  }

  /** Level 3: the threads the person follows (started, replied to, mentioned in), newest reply first. */
  async followedThreads(): Promise<FollowedThread[]> {
    return (await page(this.api.GET('/api/v1/threads', { params: { query: { limit: 50 } } }))).data;
  }

  /** Level 3: the thread is read up to `replyId` (the Threads view, on opening it). */
  async markThreadRead(rootId: string, replyId: string) {
    await this.api.POST('/api/v1/threads/{message_id}/read', { params: { path: { message_id: rootId } }, body: { message_id: replyId } });
  }

  /** A conversation's unread top-level messages by others, oldest first (its newest page is loaded when it has none). */
  async unreadMessages(conversationId: string) {
    await this.loadNewest(conversationId);
    const me = this.store.me?.id;
    const count = this.store.unreadCount(conversationId);
    return count ? this.store.list(conversationId).filter((m) => m.author_id !== me && m.state === 'sent').slice(-count) : [];
  }

  /** Marks a conversation read from outside it (the all-unreads view): up to its newest message. */
  async markConversationRead(conversationId: string) {
    await this.loadNewest(conversationId);
    this.store.markRead(conversationId);
    this.store.changed();
  }
}

export { ApiError };

/** The id of a file named by an avatar address of this server (`<origin>/api/v1/files/<id>`), else null. */
export function avatarFileId(url: string | null | undefined, origin: string): string | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    const m = /^\/api\/v1\/files\/([0-9a-f-]{36})$/i.exec(u.pathname);
    return u.origin === origin && m ? m[1]! : null;
  } catch {
    return null;
  }
}

/** The embedded store's signed links are API paths: used on the origin the app was loaded from. */
export function sameOriginPath(raw: string, origin: string): string | null {
  try {
    const url = new URL(raw, origin);
    if (url.pathname.startsWith('/api/v1/files/')) return `${origin}${url.pathname}${url.search}`;
    return url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

/**
 * Revokes `key` with itself (level 2 has no "current key" route: the key is
 * found among its holder's keys by its prefix, the first 12 characters the
 * API shows of every key). Nothing is revoked when the prefix is not one key's.
 */
async function revokeKey(api: Api, key: string) {
  const keys = await all((cursor) => page(api.GET('/api/v1/api-keys', { params: { query: { cursor, limit: 100 } } })));
  const mine = keys.filter((k) => key.startsWith(k.prefix));
  if (mine.length !== 1) return;
  await data(api.DELETE('/api/v1/api-keys/{key_id}', { params: { path: { key_id: mine[0]!.id } } }));
}
