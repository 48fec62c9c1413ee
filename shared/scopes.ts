// Scoped keys (contract §15, level 3; docs/security.md, "Scopes"). A key may
// carry `scopes` (which kinds of call it makes) and `conversation_ids` (which
// conversations it reaches); null for either: no limit beyond its user's role.
// A scope never adds a permission: every route's role rules run after the
// scope check, so a key grants at most what its user's role allows.
//
// One scope check: every route of the API declares the scope it needs
// (shared/http/route.ts `scope`), the stream its own (services/gateway), and
// requireScope below is the only place that compares it with the key's.
// Conversations are applied where conversations are found: the access check
// (services/core/channels/channels.access.ts requireReadable), the lists and
// search (their queries take `conversationIds`), the stream and event
// subscriptions (reachesEvent below).
import { AppError } from './errors.js';
import type { LevelSpan } from './feature-level.js';

/** Keys carry scopes and conversations, and routes declare theirs (`x-scope`), from this level on. */
export const KEY_SCOPES: LevelSpan = { since: 3 };

/** Every scope a key may carry, in the order they are documented. */
export const SCOPES = ['read', 'messages:write', 'channels:write', 'files:write', 'events', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * What a route declares it needs: a scope, `any_key` (any valid key, whatever
 * its scopes: what the route does can only narrow the key, POST /api-keys) or
 * `public` (no key at all: `auth: 'none'`).
 */
export type RouteScope = Scope | 'any_key' | 'public';

/** The scope a key needs to open the stream (GET /api/v1/stream, served by the gateway, outside the route table). */
export const STREAM_SCOPE: Scope = 'events';

/** What a key may do and reach: null is no limit (every key before level 3, and any key made without them). */
export interface KeyLimits {
  scopes: readonly Scope[] | null;
  conversationIds: readonly string[] | null;
}

export const UNLIMITED: KeyLimits = Object.freeze({ scopes: null, conversationIds: null });

export const insufficientScope = (scope: Scope, what = 'this call') =>
  new AppError('insufficient_scope', `${what} needs the scope ${scope}, which this API key does not have`);

/** The one scope check: throws 403 insufficient_scope naming the scope `needed`. */
export function requireScope(key: Pick<KeyLimits, 'scopes'>, needed: RouteScope): void {
  if (needed === 'public' || needed === 'any_key' || !key.scopes) return;
  if (!key.scopes.includes(needed)) throw insufficientScope(needed);
}

/**
 * Making a channel or opening a conversation: refused to a key limited to
 * conversations (403 insufficient_scope), which could not reach the new one,
 * and whose answer would name a conversation outside its limits (an existing
 * DM that POST /dms returns).
 */
export function requireAnyConversation(key: Pick<KeyLimits, 'conversationIds'>, what: string): void {
  if (key.conversationIds) {
    throw new AppError('insufficient_scope', `${what} needs a key not limited to conversations (conversation_ids): this API key reaches only its own`);
  }
}

/** Whether a key limited to `conversationIds` reaches a conversation. */
export const reachesConversation = (key: Pick<KeyLimits, 'conversationIds'>, conversationId: string): boolean =>
  !key.conversationIds || key.conversationIds.includes(conversationId);

/**
 * The conversation an event is about, or null for one about none (a user,
 * the workspace). Channel-addressed events name it in their address; the
 * others (a public channel's creation or update, a DM opened) in their data.
 */
export function conversationOfEvent(event: { to: { scope: string; channel_id?: string }; data: Record<string, unknown> }): string | null {
  if (event.to.scope === 'channel' && event.to.channel_id) return event.to.channel_id;
  const data = event.data;
  if (typeof data.channel_id === 'string') return data.channel_id;
  const object = (data.channel ?? data.conversation) as { id?: unknown } | undefined;
  if (object && typeof object.id === 'string') return object.id;
  const message = data.message as { channel_id?: unknown } | undefined;
  if (message && typeof message.channel_id === 'string') return message.channel_id;
  return null;
}

/** Whether an event may reach a key limited to conversations: events about others are absent to it. */
export function reachesEvent(key: Pick<KeyLimits, 'conversationIds'>, event: Parameters<typeof conversationOfEvent>[0]): boolean {
  if (!key.conversationIds) return true;
  const conversationId = conversationOfEvent(event);
  return conversationId === null || key.conversationIds.includes(conversationId);
}

/**
 * The limits of a key made from `parent` (POST /api-keys with a key, the key
 * a sign-in link gives, a later OAuth grant): what is asked, within the
 * parent's; nothing asked keeps the parent's. Asking a scope the parent lacks
 * is refused (403 insufficient_scope naming it); conversations outside the
 * parent's are the caller's to refuse (they answer as hidden, 404).
 */
export function narrowLimits(parent: KeyLimits, asked: { scopes?: readonly Scope[] | null; conversationIds?: readonly string[] | null }): KeyLimits {
  const scopes = asked.scopes ?? parent.scopes;
  if (parent.scopes !== null && scopes !== null) {
    for (const scope of scopes) if (!parent.scopes.includes(scope)) throw insufficientScope(scope, `a key with ${scope}`);
  }
  const conversationIds = asked.conversationIds ?? parent.conversationIds;
  return {
    scopes: scopes === null ? null : SCOPES.filter((s) => scopes.includes(s)),
    conversationIds: conversationIds === null ? null : [...new Set(conversationIds)],
  };
}
