// Keys made from keys (issue 33; docs/security.md, "Derived credentials"):
// at level 3 a key made with another key (POST /api-keys, the web key a
// sign-in link gives) records its parent, never expires after it, and is
// revoked with it, and is limited to what its parent may do and reach
// (scoped keys, shared/scopes.ts). Level 2 records no parent, so its keys
// behave as before.
import { issueApiKey, limitsOfRow, type Actor, type ApiKeyRow, type PresentApiKey } from '../../../shared/auth.js';
import type { Knex } from '../../../shared/db/knex.js';
import { AppError, forbidden, notFound } from '../../../shared/errors.js';
import type { PageQuery } from '../../../shared/http/envelope.js';
import { isUuid } from '../../../shared/ids.js';
import { canCreateUsers } from '../users/users.policy.js';
import { findActiveUser } from '../users/users.store.js';
import { recordEvents } from '../../../shared/events.js';
import type { Runtime } from '../../../shared/runtime.js';
import { recordAudit } from '../audit/audit.store.js';
import { narrowLimits, type KeyLimits, type Scope } from '../../../shared/scopes.js';
import { requireReadableIds } from '../channels/channels.access.js';
import { decodeCursor, pageOf } from '../../../shared/http/envelope.js';


export interface ParentKey {
  id: string;
  expires_at: Date | null;
  scopes: Scope[] | null;
  conversation_ids: string[] | null;
}

const parentGone = () => new AppError('unauthorized', 'the key this was made with is revoked or expired: sign in again');

/**
 * The parent key, live, locked FOR SHARE until the transaction ends: a
 * revocation of it (an UPDATE) waits, and then finds the child this
 * transaction makes.
 */
export async function lockLiveKey(trx: Knex.Transaction, keyId: string): Promise<ParentKey> {
  const row = await trx('api_keys').where({ id: keyId }).whereNull('revoked_at').forShare().first('id', 'expires_at', 'scopes', 'conversation_ids');
  if (!row || (row.expires_at && new Date(row.expires_at).getTime() <= Date.now())) throw parentGone();
  return row as ParentKey;
}

/** `wanted` bounded by the parent's expiry: none, or a later one, becomes the parent's. */
export const boundedExpiry = (wanted: Date | null | undefined, parent: ParentKey): Date | null => {
  const limit = parent.expires_at ? new Date(parent.expires_at) : null;
  if (!limit) return wanted ?? null;
  return wanted && wanted.getTime() < limit.getTime() ? wanted : limit;
};

/** A child's limits: what it asks for, within its parent's (shared/scopes.ts narrowLimits); none asked keeps the parent's. */
export const childLimits = (parent: ParentKey, asked: { scopes?: readonly Scope[] | null; conversationIds?: readonly string[] | null } = {}): KeyLimits =>
  narrowLimits(limitsOfRow(parent), asked);

/**
 * A key for the caller, child of the key making it (POST /api-keys at level
 * 3; a later caller, such as an OAuth grant, passes the scopes and
 * conversations it was asked for). Never expires after its parent, never does
 * or reaches more than it: a scope the parent lacks is 403
 * insufficient_scope, a conversation it cannot read is 404.
 */
export function issueChildKey(
  rt: Runtime,
  parent: Actor,
  o: ChildKeyOptions,
  present: PresentApiKey = rt.presenters.apiKey,
) {
  return rt.db.transaction((trx) => issueChildKeyIn(trx, parent, o, present));
}

export interface ChildKeyOptions {
  name: string;
  expiresAt?: Date | null;
  scopes?: readonly Scope[] | null;
  conversationIds?: readonly string[] | null;
}

/** issueChildKey inside a caller's transaction (an OAuth code or refresh exchange, which commits the key with its grant). */
export async function issueChildKeyIn(trx: Knex.Transaction, parent: Actor, o: ChildKeyOptions, present: PresentApiKey) {
  const parentKey = await lockLiveKey(trx, parent.keyId);
  const limits = childLimits(parentKey, { scopes: o.scopes, conversationIds: o.conversationIds });
  if (o.conversationIds) await requireReadableIds(trx, { ...parent, ...limitsOfRow(parentKey) }, o.conversationIds);
  const issued = await issueApiKey(
    trx,
    {
      workspaceId: parent.workspaceId,
      userId: parent.userId,
      name: o.name,
      expiresAt: boundedExpiry(o.expiresAt, parentKey),
      parentKeyId: parentKey.id,
      limits,
    },
    present,
  );
  await recordAudit(trx, {
    workspaceId: parent.workspaceId,
    action: 'api_key.created',
    actor: parent,
    target: { type: 'api_key', id: issued.id },
    details: { name: issued.name, prefix: issued.prefix, expires_at: issued.expires_at, parent_key_id: parentKey.id, scopes: limits.scopes, conversation_ids: limits.conversationIds },
  });
  return issued;
}

/**
 * Revokes the keys `rootIds` (already revoked or not) and every key made from
 * them, down the tree, but `keep` and what was made from it; each newly
 * revoked key gets its api_key.revoked event (open streams end, caches drop it).
 * Two statements: the roots first (an UPDATE, which waits for a child being
 * made under FOR SHARE), then the descendants, read after that child commits.
 */
export async function revokeKeyTrees(rt: Runtime, trx: Knex.Transaction, rootIds: string[], keep: string | null = null): Promise<string[]> {
  if (rootIds.length === 0) return [];
  const roots: { id: string; user_id: string; workspace_id: string }[] = await trx('api_keys')
    .whereIn('id', rootIds)
    .whereNull('revoked_at')
    .update({ revoked_at: trx.fn.now() })
    .returning(['id', 'user_id', 'workspace_id']);
  const { rows: descendants } = await trx.raw<{ rows: { id: string; user_id: string; workspace_id: string }[] }>(
    `WITH RECURSIVE tree AS (
       SELECT k.id FROM api_keys k WHERE k.parent_key_id = ANY(?::uuid[]) AND k.id IS DISTINCT FROM ?::uuid
       UNION
       SELECT k.id FROM api_keys k JOIN tree t ON k.parent_key_id = t.id WHERE k.id IS DISTINCT FROM ?::uuid
     )
     UPDATE api_keys SET revoked_at = now() WHERE id IN (SELECT id FROM tree) AND revoked_at IS NULL
     RETURNING id, user_id, workspace_id`,
    [rootIds, keep, keep],
  );
  const revoked = [...roots, ...descendants];
  await recordEvents(
    rt,
    trx,
    revoked.map((k) => ({ type: 'api_key.revoked' as const, to: { scope: 'users' as const, workspace_id: k.workspace_id, user_ids: [k.user_id] }, data: { key_id: k.id } })),
  );
  return revoked.map((k) => k.id);
}

/** A user's live keys (not revoked), oldest first, a keyset page. */
export async function listKeys(rt: Runtime, userId: string, q: PageQuery) {
  const after = decodeCursor(q.cursor);
  const rows = await rt
    .db<ApiKeyRow>('api_keys')
    .where({ user_id: userId })
    .whereNull('revoked_at')
    .modify((query) => {
      if (after !== undefined) query.where('seq', '>', after);
    })
    .orderBy('seq')
    .limit(q.limit + 1);
  return pageOf(rows, q.limit, rt.presenters.apiKey);
}

/**
 * Revokes one live key of `userId` and every key made from it, with its
 * api_key.revoked audit entry, in one transaction; 404 when the user has no
 * such live key.
 */
export async function revokeKey(rt: Runtime, actor: Actor, userId: string, keyId: string, details?: Record<string, unknown>): Promise<void> {
  if (!isUuid(keyId)) throw notFound('API key');
  await rt.db.transaction(async (trx) => {
    const live = await trx('api_keys').where({ id: keyId, user_id: userId }).whereNull('revoked_at').first('id');
    if (!live) throw notFound('API key');
    // Open streams authenticated with this key end (the gateway listens); keys made from it end with it,
    // but the calling key's own branch: a browser revoking the sign-in link's key it was made from
    // (the web app's one-time `#key=` link) stays signed in, bounded by that key's expiry as before.
    await revokeKeyTrees(rt, trx, [keyId], actor.keyId);
    await recordAudit(trx, { workspaceId: actor.workspaceId, action: 'api_key.revoked', actor, target: { type: 'api_key', id: keyId }, ...(details ? { details } : {}) });
  });
}

/**
 * An agent of the caller's workspace whose keys an owner or admin manages
 * (level 3, contract §14). People's keys stay theirs (removing a person ends
 * them), and agents never manage other agents' credentials, as they never
 * create users: 403. A user who is not there (or removed): 404.
 */
export async function requireManagedAgent(rt: Runtime, actor: Actor, userId: string) {
  if (!canCreateUsers(actor)) throw forbidden(actor.isAgent ? "agents do not manage other users' keys" : "only workspace owners and admins manage an agent's keys");
  const user = await findActiveUser(rt.db, actor.workspaceId, userId);
  if (!user) throw notFound('User');
  if (!user.is_agent) throw forbidden("a person's keys are their own: remove the member to end them");
  return user;
}

/** A new root key for an agent, by an owner or admin (a reactivated agent's way back; a rotation): audited api_key.created. */
export function issueAgentKey(rt: Runtime, actor: Actor, agentId: string, o: { name: string; expiresAt?: Date | null }) {
  return rt.db.transaction(async (trx) => {
    const issued = await issueApiKey(trx, { workspaceId: actor.workspaceId, userId: agentId, name: o.name, expiresAt: o.expiresAt }, rt.presenters.apiKey);
    await recordAudit(trx, { workspaceId: actor.workspaceId, action: 'api_key.created', actor, target: { type: 'api_key', id: issued.id }, details: { name: issued.name, prefix: issued.prefix, expires_at: issued.expires_at, user_id: agentId } });
    return issued;
  });
}
