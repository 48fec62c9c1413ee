// The web app's client logic, without a browser: the stream reader and its
// reconnects, the store's rules, the catch-up after a reconnect, rows, links.
import { createRequire } from 'node:module';
import { expect } from 'chai';
import { SseParser } from '../../services/web/src/lib/sse.js';
import { LiveStream, type StreamState } from '../../services/web/src/lib/stream.js';
import { Store, threadKey } from '../../services/web/src/lib/store.js';
import { fillGap, Sync } from '../../services/web/src/lib/sync.js';
import { applyEvent } from '../../services/web/src/lib/events.js';
import { buildRows } from '../../services/web/src/lib/rows.js';
import { safeUrl } from '../../services/web/src/lib/links.js';
import { browserKeyRequest, keyFromHash } from '../../services/web/src/lib/session.js';
import { draftKey, loadDraft, saveDraft } from '../../services/web/src/lib/drafts.js';
import { mentionDoc, mentionedIn } from '../../services/web/src/lib/mentions.js';
import { COMMON_EMOJI } from '../../services/web/src/lib/emoji-common.js';
import { searchEmoji } from '../../services/web/src/lib/emoji.js';
import { shouldNotify } from '../../services/web/src/lib/prefs.js';
import { channelNameProblem } from '../../services/web/src/lib/rules.js';
import { searchTerms } from '../../services/web/src/lib/search.js';
import { conversationRoute, permalink } from '../../services/web/src/lib/routes.js';
import { featuresFor } from '../../services/web/src/lib/features.js';
import type { Message, Page, User } from '../../services/web/src/lib/types.js';

const me: User = { id: 'u-me', name: 'me', display_name: null, avatar_url: null, role: 'member', is_agent: false, created_at: '2026-01-01T00:00:00.000Z' };
let seq = 0;
function msg(o: Partial<Message> & { id?: string } = {}): Message {
  seq += 1;
  return {
    id: o.id ?? `m${String(seq).padStart(5, '0')}`,
    channel_id: 'c1',
    author_id: 'u-other',
    content: `message ${seq}`,
    content_json: null,
    metadata: null,
    thread_id: null,
    thread: null,
    reactions: [],
    card_origin: null,
    mentioned_user_ids: [],
    display: null,
    webhook_id: null,
    created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString(),
    edited_at: null,
    ...o,
  };
}

class MemoryStorage {
  items = new Map<string, string>();
  getItem(k: string) {
    return this.items.get(k) ?? null;
  }
  setItem(k: string, v: string) {
    this.items.set(k, v);
  }
  removeItem(k: string) {
    this.items.delete(k);
  }
}

function newStore() {
  const store = new Store(new MemoryStorage());
  store.me = me;
  return store;
}

/** A controllable text/event-stream body. */
function sseBody() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
  const enc = new TextEncoder();
  return {
    body,
    send: (text: string) => controller.enqueue(enc.encode(text)),
    end: () => controller.close(),
    fail: () => controller.error(new Error('network down')),
  };
}

const until = async (check: () => boolean, what: string) => {
  for (let i = 0; i < 200; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`timed out waiting for ${what}`);
};

describe('web client: SSE parsing', () => {
  it('parses frames split anywhere, skips comments, joins data lines, handles CRLF', () => {
    const p = new SseParser();
    const text = ': keep-alive\n\nevent: init\r\ndata: {"a":1}\r\n\r\nevent: message.created\ndata: {"b":\ndata: 2}\n\n';
    const frames = [];
    for (const ch of text) frames.push(...p.push(ch));
    expect(frames).to.deep.equal([
      { event: 'init', data: '{"a":1}', id: null },
      { event: 'message.created', data: '{"b":\n2}', id: null },
    ]);
  });
});

describe('web client: the stream', () => {
  it('reconnects after a drop with backoff, takes the new init, and stops on 401', async () => {
    const bodies: ReturnType<typeof sseBody>[] = [];
    const calls: string[] = [];
    let refuse = false;
    const fakeFetch = (async (_url: string, init: RequestInit) => {
      calls.push(new Headers(init.headers).get('Authorization') ?? '');
      if (refuse) return new Response(JSON.stringify({ error: { code: 'unauthorized', message: 'revoked' } }), { status: 401 });
      const b = sseBody();
      bodies.push(b);
      return new Response(b.body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
    }) as typeof fetch;
    const states: StreamState[] = [];
    const inits: number[] = [];
    const events: string[] = [];
    let unauthorized = '';
    const stream = new LiveStream({
      url: 'http://x/api/v1/stream',
      key: () => 'k1',
      fetch: fakeFetch,
      minDelayMs: 10,
      maxDelayMs: 40,
      random: () => 1,
      onInit: () => inits.push(Date.now()),
      onEvent: (type) => events.push(type),
      onState: (s) => states.push(s),
      onUnauthorized: (code) => (unauthorized = code),
    });
    stream.start();
    await until(() => bodies.length === 1, 'the first connection');
    bodies[0]!.send('event: init\ndata: {"presence":{}}\n\n: ping\n\nevent: message.created\ndata: {"type":"message.created"}\n\n');
    await until(() => events.length === 1, 'the event');
    expect(stream.state).to.equal('live');
    bodies[0]!.fail();
    await until(() => bodies.length === 2, 'the reconnect');
    expect(states).to.include('reconnecting');
    bodies[1]!.send('event: init\ndata: {"presence":{}}\n\n');
    await until(() => inits.length === 2, 'the second init');
    expect(calls).to.deep.equal(['Bearer k1', 'Bearer k1']);
    refuse = true;
    bodies[1]!.end();
    await until(() => unauthorized !== '', 'the refusal');
    expect(unauthorized).to.equal('unauthorized');
    expect(stream.state).to.equal('stopped');
  });

  it('aborts a silent connection when the watchdog fires, and any byte resets it', async () => {
    const bodies: ReturnType<typeof sseBody>[] = [];
    const fakeFetch = (async (_url: string, init: RequestInit) => {
      const b = sseBody();
      bodies.push(b);
      init.signal?.addEventListener('abort', () => b.fail());
      return new Response(b.body, { status: 200 });
    }) as typeof fetch;
    const stream = new LiveStream({
      url: 'http://x/s', key: () => 'k', fetch: fakeFetch, watchdogMs: 60, minDelayMs: 5, maxDelayMs: 5, random: () => 1,
      onInit: () => undefined, onEvent: () => undefined, onState: () => undefined, onUnauthorized: () => undefined,
    });
    stream.start();
    await until(() => bodies.length === 1, 'the connection');
    // Keep-alive comments every 20 ms keep it open past the watchdog.
    for (let i = 0; i < 5; i++) {
      bodies[0]!.send(': ping\n\n');
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(bodies.length).to.equal(1);
    await until(() => bodies.length === 2, 'the watchdog reconnect');
    stream.stop();
  });

  it('waits with full jitter, capped, and at least Retry-After', () => {
    const s = new LiveStream({
      url: '', key: () => null, minDelayMs: 1000, maxDelayMs: 30_000, random: () => 0.5,
      onInit: () => undefined, onEvent: () => undefined, onState: () => undefined, onUnauthorized: () => undefined,
    });
    expect(s.delayFor(0)).to.equal(500);
    expect(s.delayFor(3)).to.equal(4000);
    expect(s.delayFor(10)).to.equal(15_000);
    expect(s.delayFor(0, 7000)).to.equal(7000);
  });
});

describe('web client: the store', () => {
  it('orders by (created_at, id), upserts by id and keeps the later edit', () => {
    const s = newStore();
    const a = msg();
    const b = msg();
    s.upsert(b, { live: true });
    s.upsert(a, { live: true });
    s.upsert(b, { live: true });
    expect(s.list('c1').map((m) => m.id)).to.deep.equal([a.id, b.id]);
    s.upsert({ ...a, content: 'edited', edited_at: '2026-02-01T00:00:00.000Z' }, { live: true });
    s.upsert({ ...a, content: 'older copy', edited_at: null }, { live: false });
    expect(s.messages.get(a.id)!.content).to.equal('edited');
  });

  it('never brings a deleted message back', () => {
    const s = newStore();
    const a = msg();
    s.upsert(a, { live: true });
    s.remove(a.id);
    s.upsert(a, { live: true });
    expect(s.list('c1')).to.have.length(0);
  });

  it('swaps a pending send for the server copy once, whichever arrives first', () => {
    const s = newStore();
    const local = s.addPending('c1', 'hello', null);
    expect(s.list('c1')[0]!.state).to.equal('pending');
    const server = msg({ author_id: me.id, content: 'hello' });
    applyEvent(s, 'message.created', { message: server }); // the event beats the POST answer
    s.resolvePending(local, server);
    const shown = s.list('c1');
    expect(shown.map((m) => [m.id, m.state, m.key])).to.deep.equal([[server.id, 'sent', local]]);
  });

  it('counts reactions once per user and thread replies on the root', () => {
    const s = newStore();
    const root = msg();
    s.upsert(root, { live: true });
    applyEvent(s, 'reaction.added', { message_id: root.id, emoji: 'tada', user_id: 'u2' });
    applyEvent(s, 'reaction.added', { message_id: root.id, emoji: 'tada', user_id: 'u2' });
    applyEvent(s, 'reaction.added', { message_id: root.id, emoji: 'tada', user_id: 'u3' });
    expect(s.messages.get(root.id)!.reactions).to.deep.equal([{ emoji: 'tada', count: 2, user_ids: ['u2', 'u3'] }]);
    applyEvent(s, 'reaction.removed', { message_id: root.id, emoji: 'tada', user_id: 'u2' });
    expect(s.messages.get(root.id)!.reactions[0]!.count).to.equal(1);
    const reply = msg({ thread_id: root.id });
    applyEvent(s, 'message.created', { message: reply });
    applyEvent(s, 'message.created', { message: reply });
    expect(s.messages.get(root.id)!.thread!.reply_count).to.equal(1);
    expect(s.list(threadKey(root.id)).map((m) => m.id)).to.deep.equal([reply.id]);
    expect(s.list('c1').map((m) => m.id)).to.deep.equal([root.id]);
  });

  it('counts our own reply on its root once, whether the POST answer or the event comes first', () => {
    for (const eventFirst of [false, true]) {
      const s = newStore();
      const root = msg();
      s.upsert(root, { live: false });
      const local = s.addPending('c1', 'my reply', root.id);
      const reply = msg({ author_id: me.id, content: 'my reply', thread_id: root.id });
      if (eventFirst) applyEvent(s, 'message.created', { message: reply });
      s.resolvePending(local, reply);
      if (!eventFirst) applyEvent(s, 'message.created', { message: reply });
      expect(s.messages.get(root.id)!.thread!.reply_count, `event first: ${eventFirst}`).to.equal(1);
    }
    // A page of replies is already counted in the root's own thread summary.
    const s = newStore();
    const root = msg({ thread: { reply_count: 1, last_reply_at: '2026-01-01T00:00:00.000Z' } });
    s.upsert(root, { live: false });
    s.addPage(threadKey(root.id), [msg({ thread_id: root.id })], { next_cursor: null, has_more: false }, false);
    expect(s.messages.get(root.id)!.thread!.reply_count).to.equal(1);
  });

  it('keeps live messages out of a segment far back (level 3 around) until its newer pages reach the live end', () => {
    const s = newStore();
    const held = [msg(), msg(), msg()];
    const between = [msg(), msg()];
    // The page around a message: newest first, with the cursor of the page newer than it.
    s.resetTimeline('c1', [...held].reverse(), { next_cursor: 'older', has_more: true, prev_cursor: 'newer' });
    expect(s.timeline('c1').newerCursor).to.equal('newer');
    const live = msg({ content: 'posted while far back' });
    expect(s.upsert(live, { live: true })).to.equal(true);
    expect(s.list('c1').map((m) => m.id), 'not next to what the segment holds').to.deep.equal(held.map((m) => m.id));
    expect(s.unreadCount('c1'), 'still counted').to.equal(1);
    // An edit of a message the segment holds still applies.
    s.upsert({ ...held[1]!, content: 'edited', edited_at: '2026-02-01T00:00:00.000Z' }, { live: true });
    expect(s.messages.get(held[1]!.id)!.content).to.equal('edited');
    // Newer pages extend it; the last one (prev_cursor null) reaches the live end, with the live message in it.
    s.addNewerPage('c1', [...between].reverse(), { prev_cursor: 'newer2' });
    expect(s.timeline('c1').newerCursor).to.equal('newer2');
    // The last page was read before `live` was posted: it is added from what arrived meanwhile.
    s.addNewerPage('c1', [], { prev_cursor: null });
    expect(s.timeline('c1').newerCursor).to.equal(null);
    expect(s.list('c1').map((m) => m.id)).to.deep.equal([...held, ...between, live].map((m) => m.id));
    expect(s.unreadCount('c1'), 'counted once').to.equal(1);
    // Attached again: live messages are appended as before.
    const next = msg();
    s.upsert(next, { live: true });
    expect(s.list('c1').at(-1)!.id).to.equal(next.id);
    // A fresh newest page (Jump to newest) attaches a segment at once.
    s.resetTimeline('c1', [next], { next_cursor: null, has_more: false, prev_cursor: 'x' });
    s.resetTimeline('c1', [next], { next_cursor: null, has_more: false });
    expect(s.timeline('c1').newerCursor).to.equal(null);
  });

  it('keeps unread as a set of ids after the last visit, cleared on read', () => {
    const s = newStore();
    const a = msg();
    s.upsert(a, { live: true });
    s.upsert(a, { live: true });
    s.upsert(msg({ author_id: me.id }), { live: true });
    expect(s.unreadCount('c1')).to.equal(1);
    s.markRead('c1');
    expect(s.unreadCount('c1')).to.equal(0);
    s.countUnread('c1', [msg(), a]);
    expect(s.unreadCount('c1')).to.equal(1);
  });

  it("keeps what only this viewer reads of a user (email, email_notifications) when a user event brings the workspace's view", () => {
    const s = newStore();
    s.me = { ...me, email: 'me@example.com', email_notifications: 'never' };
    s.users.set(me.id, s.me);
    const colleague: User = { ...me, id: 'u-2', name: 'ana', email: 'ana@example.com' };
    s.users.set(colleague.id, colleague);
    // The PATCH's answer is already in the store; its event, as every member
    // gets it (parsed JSON, so without the private keys), comes after.
    const { email: _mine, ...publicMe } = me as User & { email?: string };
    applyEvent(s, 'user.updated', { user: { ...publicMe, display_name: 'Me Again' } });
    const { email: _theirs, ...publicColleague } = colleague;
    applyEvent(s, 'member.updated', { user: { ...publicColleague, role: 'admin' } });
    expect(s.me).to.deep.include({ display_name: 'Me Again', email: 'me@example.com', email_notifications: 'never' });
    expect(s.users.get(me.id)).to.deep.include({ display_name: 'Me Again', email: 'me@example.com' });
    expect(s.users.get(colleague.id)).to.deep.include({ role: 'admin', email: 'ana@example.com' });
  });

  it('drops a private channel when the user is removed from it', () => {
    const s = newStore();
    s.upsertChannel({ id: 'c9', name: 'secret', description: '', is_private: true, is_default: false, parent_channel_id: null, team_id: null, created_by: null, created_at: '' });
    s.memberOf.add('c9');
    applyEvent(s, 'channel.member_removed', { channel_id: 'c9', user_id: me.id });
    expect(s.channels.has('c9')).to.equal(false);
  });
});

/** A server's channel history, newest first in pages of `size`. */
function history(all: Message[], size = 3) {
  let calls = 0;
  const fetchPage = async (_key: string, cursor: string | null): Promise<Page<Message>> => {
    calls += 1;
    const newest = [...all].reverse();
    const start = cursor ? Number(cursor) : 0;
    const data = newest.slice(start, start + size);
    const more = start + size < newest.length;
    return { data, pagination: { next_cursor: more ? String(start + size) : null, has_more: more } };
  };
  return { fetchPage, calls: () => calls };
}

describe('web client: catching up after a reconnect', () => {
  it('pages back to a known message, shows every missed one once and drops deleted ones', async () => {
    const s = newStore();
    const old = [msg(), msg(), msg()];
    for (const m of old) s.upsert(m, { live: false });
    s.timeline('c1').loaded = true;
    const missed = [msg(), msg(), msg(), msg(), msg()];
    const server = [old[0]!, old[1]!, ...missed]; // old[2] was deleted while we were away
    const h = history(server);
    expect(await fillGap(s, 'c1', h.fetchPage)).to.equal('filled');
    expect(s.list('c1').map((m) => m.id)).to.deep.equal(server.map((m) => m.id));
    expect(h.calls()).to.equal(2);
  });

  it('starts again from the newest page when the gap is longer than five pages', async () => {
    const s = newStore();
    const old = msg();
    s.upsert(old, { live: false });
    s.timeline('c1').loaded = true;
    const server = [old, ...Array.from({ length: 30 }, () => msg())];
    const h = history(server);
    expect(await fillGap(s, 'c1', h.fetchPage)).to.equal('reset');
    expect(h.calls()).to.equal(5);
    expect(s.list('c1').map((m) => m.id)).to.deep.equal(server.slice(-3).map((m) => m.id));
    expect(s.timeline('c1').hasMore).to.equal(true);
  });

  it('buffers events during the catch-up and replays them after, without duplicates', async () => {
    const s = newStore();
    const known = msg();
    s.upsert(known, { live: false });
    s.timeline('c1').loaded = true;
    s.upsertChannel({ id: 'c1', name: 'general', description: '', is_private: false, is_default: false, parent_channel_id: null, team_id: null, created_by: null, created_at: '' });
    const missed = msg();
    const live = msg();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const sync = new Sync(
      s,
      async () => {
        await gate;
        return { data: [live, missed, known], pagination: { next_cursor: null, has_more: false } };
      },
      () => ['c1'],
    );
    const done = sync.onInit(true);
    sync.onEvent('message.created', { message: live });
    expect(s.list('c1')).to.have.length(1); // buffered, not applied yet
    release();
    await done;
    expect(s.list('c1').map((m) => m.id)).to.deep.equal([known.id, missed.id, live.id]);
  });
});

describe('web client: rows, links and sign-in helpers', () => {
  it('separates days and groups one author within five minutes', () => {
    const s = newStore();
    const a = msg({ created_at: '2026-03-01T10:00:00.000Z' });
    const b = msg({ created_at: '2026-03-01T10:03:00.000Z' });
    const c = msg({ created_at: '2026-03-01T10:09:00.000Z' });
    const d = msg({ created_at: '2026-03-03T10:09:00.000Z' });
    for (const m of [a, b, c, d]) s.upsert(m, { live: false });
    const rows = buildRows(s.list('c1'));
    expect(rows.map((r) => (r.kind === 'message' ? (r.grouped ? 'grouped' : 'message') : r.kind))).to.deep.equal(['day', 'message', 'grouped', 'message', 'day', 'message']);
  });

  it("starts a new group when a hook post's display override changes the sender", () => {
    const s = newStore();
    const at = (min: number) => `2026-03-01T10:0${min}:00.000Z`;
    const person = msg({ author_id: 'u1', created_at: at(0) });
    const hook = msg({ author_id: 'u1', webhook_id: 'h1', display: { username: 'Deploy Bot' }, created_at: at(1) });
    const hook2 = msg({ author_id: 'u1', webhook_id: 'h1', display: { username: 'Deploy Bot' }, created_at: at(2) });
    const other = msg({ author_id: 'u1', webhook_id: 'h1', display: { username: 'Alerts' }, created_at: at(3) });
    for (const m of [person, hook, hook2, other]) s.upsert(m, { live: false });
    const rows = buildRows(s.list('c1'));
    expect(rows.map((r) => (r.kind === 'message' ? (r.grouped ? 'grouped' : 'message') : r.kind))).to.deep.equal(['day', 'message', 'message', 'grouped', 'message']);
  });

  it('keeps drafts per conversation and thread, and finds the people a text mentions', () => {
    const storage = new MemoryStorage();
    saveDraft(storage, draftKey('c1', null), 'for c1');
    saveDraft(storage, draftKey('c1', 'm1'), 'for the thread');
    expect(loadDraft(storage, draftKey('c1', null))).to.equal('for c1');
    expect(loadDraft(storage, draftKey('c1', 'm1'))).to.equal('for the thread');
    expect(loadDraft(storage, draftKey('c2', null))).to.equal('');
    saveDraft(storage, draftKey('c1', null), '  ');
    expect(storage.items.has('draft:c1')).to.equal(false);
    const bob = { ...me, id: 'u-bob', name: 'bob' };
    const bobby = { ...me, id: 'u-bobby', name: 'bobby' };
    expect(mentionedIn('hi @bobby and @bob.', [bob, bobby]).map((u) => u.id).sort()).to.deep.equal(['u-bob', 'u-bobby']);
    expect(mentionedIn('mail bob@example.com', [bob])).to.deep.equal([]);
    expect(mentionDoc('@bobby hi', [bob, bobby])!.content![0]!.content![0]!.attrs!.id).to.equal('u-bobby');
  });

  it("draws the 'new messages' line before the first later message from someone else", () => {
    const s = newStore();
    const a = msg({ created_at: '2026-03-01T10:00:00.000Z' });
    const mine = msg({ author_id: me.id, created_at: '2026-03-01T10:01:00.000Z' });
    const b = msg({ created_at: '2026-03-01T10:02:00.000Z' });
    for (const m of [a, mine, b]) s.upsert(m, { live: false });
    const kinds = (rows: ReturnType<typeof buildRows>) => rows.map((r) => (r.kind === 'message' ? r.message.id : r.kind));
    expect(kinds(buildRows(s.list('c1'), undefined, { afterTime: a.created_at, me: me.id }))).to.deep.equal(['day', a.id, mine.id, 'unread', b.id]);
    expect(kinds(buildRows(s.list('c1'), undefined, { afterId: a.id, me: me.id }))).to.deep.equal(['day', a.id, mine.id, 'unread', b.id]);
    expect(kinds(buildRows(s.list('c1'), undefined, { afterId: b.id, me: me.id }))).to.not.include('unread');
  });

  it('notifies of mentions and DMs only: never our own, a muted one, or the open conversation in a focused tab', () => {
    const base = { authorId: 'u2', me: 'u1', mentioned: true, isDm: false, muted: false, openHere: false, focused: true, enabled: true };
    expect(shouldNotify(base)).to.equal(true);
    expect(shouldNotify({ ...base, mentioned: false, isDm: true })).to.equal(true);
    expect(shouldNotify({ ...base, mentioned: false })).to.equal(false);
    expect(shouldNotify({ ...base, authorId: 'u1' })).to.equal(false);
    // Muted: quiet, but a mention of me still notifies.
    expect(shouldNotify({ ...base, muted: true })).to.equal(true);
    expect(shouldNotify({ ...base, muted: true, mentioned: false, isDm: true })).to.equal(false);
    expect(shouldNotify({ ...base, openHere: true })).to.equal(false);
    expect(shouldNotify({ ...base, openHere: true, focused: false })).to.equal(true);
    expect(shouldNotify({ ...base, enabled: false })).to.equal(false);
  });

  it('checks channel names as the API does (1 to 80 characters, not only spaces, kept as given)', () => {
    expect(channelNameProblem('General Chat ✨')).to.equal(null);
    expect(channelNameProblem('')).to.match(/needs a name/);
    expect(channelNameProblem('   ')).to.match(/needs a name/);
    expect(channelNameProblem('é'.repeat(80))).to.equal(null);
    expect(channelNameProblem('😀'.repeat(81))).to.match(/at most 80 characters \(this one has 81\)/);
  });

  it('marks the words and phrases of a search query, never the excluded ones', () => {
    expect(searchTerms('deploy "build 42" -staging -"old box" ok')).to.deep.equal(['deploy', 'build 42', 'ok']);
  });

  it('reads and writes the app routes: a conversation, and a message permalink (the same shape for a reply)', () => {
    const m = { channel_id: '1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed', id: '6ec0bd7f-11c0-43da-975e-2a8ad9ebae0b' };
    const link = permalink('https://chat.example', m);
    expect(link).to.equal(`https://chat.example/c/${m.channel_id}/m/${m.id}`);
    expect(conversationRoute(new URL(link).pathname)).to.deep.equal({ conversationId: m.channel_id, messageId: m.id });
    expect(conversationRoute(`/c/${m.channel_id}`)).to.deep.equal({ conversationId: m.channel_id, messageId: null });
    for (const other of ['/', '/settings', `/c/${m.channel_id}/m/`, `/c/${m.channel_id}/x/${m.id}`, '/c/%E0%A4%A']) expect(conversationRoute(other), other).to.equal(null);
  });

  it('derives the features from the feature level: none at 2, all at 3', () => {
    expect(Object.values(featuresFor(2)).every((on) => on === false)).to.equal(true);
    expect(Object.values(featuresFor(3)).every((on) => on === true)).to.equal(true);
    expect(Object.keys(featuresFor(3))).to.include.members(['search', 'presence', 'readState', 'actions', 'signInLinks', 'historyAround']);
  });

  it('lets only https: and mailto: addresses through', () => {
    expect(safeUrl('https://example.com/a')).to.equal('https://example.com/a');
    expect(safeUrl('mailto:a@example.com')).to.equal('mailto:a@example.com');
    for (const bad of ['javascript:alert(1)', ' JaVaScRiPt:alert(1)', 'java\tscript:alert(1)', 'data:text/html,<script>', 'http://example.com', '//evil.example', 'vbscript:x', 42]) {
      expect(safeUrl(bad), String(bad)).to.equal(null);
    }
    expect(safeUrl('mailto:a@example.com', { allowMailto: false })).to.equal(null);
  });

  it('names the browser key and reads the key from a link fragment', () => {
    const req = browserKeyRequest('Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/130.0 Safari/537.36', new Date('2026-11-23T12:00:00Z'));
    expect(req).to.deep.equal({ name: 'Web: Chrome 2026-11-23', expires_at: '2026-12-23T12:00:00.000Z' });
    expect(keyFromHash('#key=abc_DEF-1')).to.equal('abc_DEF-1');
    expect(keyFromHash('#other=1')).to.equal(null);
  });

  it('has built-in common shortcodes that are the ones of emojibase-data (GitHub shortcodes)', () => {
    const require = createRequire(import.meta.url);
    const compact = require('emojibase-data/en/compact.json') as { hexcode: string; unicode: string }[];
    const github = require('emojibase-data/en/shortcodes/github.json') as Record<string, string | string[]>;
    const byHex = new Map(compact.map((e) => [e.hexcode, e.unicode]));
    const full = new Map<string, string>();
    for (const [hex, codes] of Object.entries(github)) for (const c of [codes].flat()) full.set(c, byHex.get(hex)!);
    expect(Object.keys(COMMON_EMOJI).length).to.be.greaterThan(200);
    for (const [code, char] of Object.entries(COMMON_EMOJI)) expect(full.get(code), code).to.equal(char);
  });

  it('puts exact emoji matches first: a shortcode or name that is the query, then one starting with it, then a tag', () => {
    const e = (unicode: string, label: string, shortcodes: string[], tags: string[]) => ({ unicode, label, shortcodes, tags, group: 0 });
    const list = [
      e('😍', 'smiling face with heart-eyes', ['heart_eyes'], ['face', 'heart', 'love']),
      e('💔', 'broken heart', ['broken_heart'], ['break', 'broken']),
      e('💗', 'growing heart', ['heartpulse'], ['excited', 'growing']),
      e('❤️', 'red heart', ['heart'], ['heart']),
      e('👍', 'thumbs up', ['+1', 'thumbsup'], ['hand', 'up']),
    ];
    expect(searchEmoji(list, 'heart').map((x) => x.unicode)).to.deep.equal(['❤️', '😍', '💗', '💔']);
    expect(searchEmoji(list, ':+1:').map((x) => x.unicode)).to.deep.equal(['👍']);
    expect(searchEmoji(list, 'heart', 2)).to.have.length(2);
  });
});

describe('web client: agents’ working status (level 3)', () => {
  it('shows an agent.status until its expires_at, and ends it on "" or on the agent’s post there', () => {
    let now = Date.parse('2026-01-01T00:00:00.000Z');
    const s = new Store(null, () => now);
    const later = (ms: number) => new Date(now + ms).toISOString();
    applyEvent(s, 'agent.status', { conversation_id: 'c1', thread_id: null, user_id: 'bot', status: 'is reading the logs…', loading_messages: [], expires_at: later(120_000) });
    expect(s.agentStatusesIn('c1')).to.deep.equal([{ userId: 'bot', status: 'is reading the logs…' }]);
    expect(s.agentStatusesIn('c2')).to.deep.equal([]);
    now += 120_000; // the deadline passes: no event needed
    expect(s.agentStatusesIn('c1')).to.deep.equal([]);

    applyEvent(s, 'agent.status', { conversation_id: 'c1', thread_id: null, user_id: 'bot', status: 'is thinking', loading_messages: [], expires_at: later(120_000) });
    applyEvent(s, 'message.created', { message: msg({ channel_id: 'c1', author_id: 'bot' }) });
    expect(s.agentStatusesIn('c1')).to.deep.equal([]);

    applyEvent(s, 'agent.status', { conversation_id: 'c1', thread_id: null, user_id: 'bot', status: 'is thinking', loading_messages: [], expires_at: later(120_000) });
    applyEvent(s, 'agent.status', { conversation_id: 'c1', thread_id: null, user_id: 'bot', status: '', loading_messages: [], expires_at: later(0) });
    expect(s.agentStatusesIn('c1')).to.deep.equal([]);
  });
});
