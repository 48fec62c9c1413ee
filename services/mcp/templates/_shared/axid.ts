// Axid polling core for __AXID_BOT_NAME__: reads the bot's channels, answers
// new mentions, and keeps one cursor per channel (the newest message seen) in
// a small key-value store, so each run only looks at what is new.
// Only web-standard APIs (fetch), so it runs on Workers, Vercel and Node 20+.

export interface CursorStore {
  get(key: string): Promise<string | null>;
  put(key: string, value: string): Promise<void>;
}

export interface AxidSettings {
  apiKey: string;
  baseUrl?: string | undefined;
}

export interface Message {
  id: string;
  channel_id: string;
  author_id: string;
  content: string;
  thread_id: string | null;
  mentioned_user_ids?: string[];
  thread?: { reply_count: number; last_reply_at: string } | null;
  created_at: string;
}

export interface User {
  id: string;
  name: string;
  display_name?: string | null;
}

interface Channel {
  id: string;
  name: string;
  is_member?: boolean;
}

interface Cursor {
  /** The newest message seen in the channel. */
  id: string;
  created_at: string;
}

export interface PollResult {
  channels: number;
  replied: string[];
}

/** Replace this with your bot's brain. Returns the reply text. */
export async function answer(message: Message, me: User): Promise<string> {
  const question = stripMentions(message.content, me).trim();
  return question ? `Hi! You said: "${question}"` : 'Hi! How can I help?';
}

export class AxidError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(`${status} ${code}: ${message}`);
  }
}

interface Envelope<T> {
  data: T;
  pagination?: { next_cursor: string | null; has_more: boolean };
}

export class Axid {
  private readonly baseUrl: string;

  constructor(private readonly settings: AxidSettings) {
    if (!settings.apiKey) throw new Error('AXID_API_KEY is not set');
    this.baseUrl = (settings.baseUrl || 'http://localhost:3000').replace(/\/+$/, '');
  }

  async request<T>(method: string, path: string, body?: unknown): Promise<Envelope<T>> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.settings.apiKey}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${this.baseUrl}/api/v1${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json().catch(() => ({}))) as { error?: { code?: string; message?: string } } & Envelope<T>;
    if (!res.ok) throw new AxidError(res.status, json.error?.code ?? 'http_error', json.error?.message ?? res.statusText);
    return json;
  }

  /** Every item of a list endpoint, following next_cursor, at most `max`. */
  async listAll<T>(path: string, max = 1000): Promise<T[]> {
    const items: T[] = [];
    let cursor: string | null = null;
    do {
      const sep = path.includes('?') ? '&' : '?';
      const page: Envelope<T[]> = await this.request<T[]>('GET', `${path}${sep}limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      items.push(...page.data);
      cursor = page.pagination?.has_more ? page.pagination.next_cursor : null;
    } while (cursor && items.length < max);
    return items;
  }
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const names = (me: User) => [me.name, me.display_name].filter((n): n is string => typeof n === 'string' && n.length > 0);

export function stripMentions(text: string, me: User): string {
  let out = text;
  for (const name of names(me)) out = out.replace(new RegExp(`@${escapeRegExp(name)}`, 'gi'), '');
  return out;
}

export function mentions(message: Message, me: User): boolean {
  if ((message.mentioned_user_ids ?? []).includes(me.id)) return true;
  const content = message.content.toLowerCase();
  return names(me).some((name) => content.includes(`@${name.toLowerCase()}`));
}

async function myChannels(axid: Axid, me: User): Promise<Channel[]> {
  const channels = await axid.listAll<Channel>('/channels');
  const mine: Channel[] = [];
  for (const channel of channels) {
    if (typeof channel.is_member === 'boolean') {
      if (channel.is_member) mine.push(channel);
      continue;
    }
    const members = await axid.listAll<{ id?: string; user_id?: string }>(`/channels/${channel.id}/members`);
    if (members.some((m) => (m.user_id ?? m.id) === me.id)) mine.push(channel);
  }
  return mine;
}

/** Messages of a list (newest first) posted after the cursor, walking pages until it is reached. */
async function newerThan(axid: Axid, path: string, cursor: Cursor, maxPages = 5): Promise<Message[]> {
  const since = Date.parse(cursor.created_at);
  const found: Message[] = [];
  let next: string | null = null;
  for (let page = 0; page < maxPages; page++) {
    const sep = path.includes('?') ? '&' : '?';
    const res: Envelope<Message[]> = await axid.request<Message[]>('GET', `${path}${sep}limit=50${next ? `&cursor=${encodeURIComponent(next)}` : ''}`);
    for (const message of res.data) {
      if (message.id === cursor.id || Date.parse(message.created_at) < since) return found;
      found.push(message);
    }
    next = res.pagination?.has_more ? res.pagination.next_cursor : null;
    if (!next) break;
  }
  return found;
}

/** One polling run: answers every mention posted since the previous run. */
export async function pollOnce(settings: AxidSettings, store: CursorStore): Promise<PollResult> {
  const axid = new Axid(settings);
  const me = (await axid.request<User>('GET', '/users/me')).data;
  const channels = await myChannels(axid, me);
  const replied: string[] = [];

  for (const channel of channels) {
    const key = `cursor:${channel.id}`;
    const saved = await store.get(key);
    const newest = (await axid.request<Message[]>('GET', `/channels/${channel.id}/messages?limit=1`)).data[0];
    if (!saved) {
      // First run for this channel: start from now, answer nothing older.
      if (newest) await store.put(key, JSON.stringify({ id: newest.id, created_at: newest.created_at } satisfies Cursor));
      continue;
    }
    const cursor = JSON.parse(saved) as Cursor;
    const fresh = await newerThan(axid, `/channels/${channel.id}/messages`, cursor);
    // Thread replies are listed per thread: look into the threads that moved
    // since the cursor among the recent top-level messages.
    const recentRoots = (await axid.request<Message[]>('GET', `/channels/${channel.id}/messages?limit=50`)).data;
    for (const root of recentRoots) {
      if (root.thread && Date.parse(root.thread.last_reply_at) >= Date.parse(cursor.created_at)) {
        fresh.push(...(await newerThan(axid, `/channels/${channel.id}/messages?thread_id=${root.id}`, cursor)));
      }
    }
    fresh.sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at));

    let latest = cursor;
    for (const message of fresh) {
      if (Date.parse(message.created_at) >= Date.parse(latest.created_at)) latest = { id: message.id, created_at: message.created_at };
      if (message.author_id === me.id || !mentions(message, me)) continue;
      const reply = await axid.request<Message>('POST', `/channels/${channel.id}/messages`, {
        content: await answer(message, me),
        ...(message.thread_id ? { thread_id: message.thread_id } : {}),
      });
      replied.push(reply.data.id);
      latest = { id: reply.data.id, created_at: reply.data.created_at };
    }
    if (latest !== cursor) await store.put(key, JSON.stringify(latest));
  }
  return { channels: channels.length, replied };
}
