// Axid event endpoint core for __AXID_BOT_NAME__: Axid POSTs the bot's events
// here (an event subscription, docs/bots.md); this answers the URL challenge,
// checks the Axid-Signature, and answers mentions. Only web-standard APIs
// (fetch, Web Crypto), so it runs on Workers, Vercel and Node 20+.

export interface AxidSettings {
  apiKey: string;
  baseUrl?: string | undefined;
  /** The subscription's secret(s) (`axsec_...`), comma-separated during a rotation. */
  signingSecret?: string | undefined;
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

const BOT_NAME = "__AXID_BOT_NAME__";

/** A receiver should refuse a signature older than this (contract: 5 minutes). */
export const SIGNATURE_TOLERANCE_S = 300;

const hexBytes = (hex: string) => {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
};

/**
 * Checks `Axid-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`
 * (one v1 per live secret during a rotation) against any of `secrets`.
 * crypto.subtle.verify compares in constant time; `t` must be within the tolerance.
 */
export async function verifySignature(header: string | null, body: string, secrets: string[], now = Math.floor(Date.now() / 1000)): Promise<boolean> {
  if (!header) return false;
  const parts = header.split(',').map((p) => p.trim().split('='));
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  if (!Number.isInteger(t) || Math.abs(now - t) > SIGNATURE_TOLERANCE_S) return false;
  const signatures = parts.filter(([k, v]) => k === 'v1' && typeof v === 'string' && /^[0-9a-f]{64}$/.test(v)).map(([, v]) => hexBytes(v as string));
  const data = new TextEncoder().encode(`${t}.${body}`);
  for (const secret of secrets) {
    const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
    for (const signature of signatures) if (await crypto.subtle.verify('HMAC', key, signature, data)) return true;
  }
  return false;
}

/** What Axid POSTs: one event (docs/bots.md). */
export interface AxidDelivery {
  id: string;
  type: string;
  created_at: string;
  subscription_id: string;
  data: { message?: Message } & Record<string, unknown>;
}

let me: User | null = null;
/** Event ids handled by this instance: a retried delivery (same id) is answered once. */
const seen = new Set<string>();
const remember = (id: string) => {
  seen.add(id);
  if (seen.size > 1000) seen.delete(seen.values().next().value as string);
};

/** Answers a mention of the bot: in the thread when the mention was in one. */
export async function handleDelivery(settings: AxidSettings, delivery: AxidDelivery): Promise<string | null> {
  const message = delivery.data.message;
  if (delivery.type !== 'message.created' || !message) return null;
  const axid = new Axid(settings);
  me ??= (await axid.request<User>('GET', '/users/me')).data;
  if (message.author_id === me.id || !mentions(message, me)) return null;
  const reply = await axid.request<Message>('POST', `/channels/${message.channel_id}/messages`, {
    content: await answer(message, me),
    ...(message.thread_id ? { thread_id: message.thread_id } : {}),
  });
  return reply.data.id;
}

/**
 * The whole endpoint: `request` is what Axid POSTed. Answers the
 * url_verification challenge (sent once, when the subscription is created,
 * before its secret exists: so it is not signed), refuses anything not signed
 * with the secret (401), and answers mentions. `defer` lets a platform finish
 * the reply after the 200 (Workers: ctx.waitUntil); without it the reply is
 * sent before answering (Axid waits up to 10 s, then retries the same event id).
 */
export async function handleEventRequest(request: Request, settings: AxidSettings, defer?: (work: Promise<unknown>) => void): Promise<Response> {
  if (request.method !== 'POST') return new Response(`${BOT_NAME} answers Axid events here (POST).\n`);
  const body = await request.text();
  let event: { type?: unknown; challenge?: unknown } & Partial<AxidDelivery>;
  try {
    event = JSON.parse(body);
  } catch {
    return new Response('not JSON', { status: 400 });
  }
  if (event.type === 'url_verification' && typeof event.challenge === 'string') {
    return new Response(event.challenge, { headers: { 'content-type': 'text/plain' } });
  }
  const secrets = (settings.signingSecret ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  if (secrets.length === 0) return new Response('AXID_SIGNING_SECRET is not set', { status: 500 });
  if (!(await verifySignature(request.headers.get('axid-signature'), body, secrets))) return new Response('bad signature', { status: 401 });
  const delivery = event as AxidDelivery;
  if (seen.has(delivery.id)) return new Response('already handled');
  remember(delivery.id);
  const work = handleDelivery(settings, delivery).catch((err: unknown) => {
    seen.delete(delivery.id); // let Axid's retry try again
    throw err;
  });
  if (defer) {
    defer(work.catch((err: unknown) => console.error(`event ${delivery.id}: ${String(err)}`)));
    return new Response('ok');
  }
  try {
    const replied = await work;
    return Response.json({ replied });
  } catch (err) {
    console.error(`event ${delivery.id}: ${String(err)}`);
    return new Response('failed, retry', { status: 503 });
  }
}
