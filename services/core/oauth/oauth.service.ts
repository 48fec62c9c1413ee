// OAuth 2.1 for MCP clients (contract §15; docs/mcp.md; docs/security.md
// "OAuth for MCP clients"). The protocol's shapes and checks (metadata,
// registration, PKCE S256, redirect matching, client authentication) are the
// MCP SDK's handlers (services/api/modules/oauth); this is what they store
// and decide: registered clients, the authorization a person approves on the
// consent screen, its one-time code, and the grant whose access token is an
// ordinary API key made from the consenting key (issueChildKeyIn): scoped,
// expiring, listed with the person's keys and ended by revoking it there.
import { createHash, randomBytes } from 'node:crypto';
import { InvalidGrantError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthClientInformationFull, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Actor } from '../../../shared/auth.js';
import type { Knex } from '../../../shared/db/knex.js';
import { AppError, invalid, notFound } from '../../../shared/errors.js';
import { isUuid } from '../../../shared/ids.js';
import type { Runtime } from '../../../shared/runtime.js';
import { narrowLimits, SCOPES, type Scope } from '../../../shared/scopes.js';
import { recordAudit } from '../audit/audit.store.js';
import { requireReadableIds } from '../channels/channels.access.js';
import { issueChildKeyIn, revokeKeyTrees } from '../api-keys/api-keys.service.js';

/** How long a person has to decide on the consent screen. */
const REQUEST_TTL_MS = 10 * 60_000;
/** How long a code lives between the consent and the client's token request (it follows at once). */
const CODE_TTL_MS = 60_000;
/** An access token (an API key) lives an hour; the client refreshes it. */
export const ACCESS_TOKEN_TTL_S = 3600;
/** A grant lives at most 30 days, and never past the consenting key. */
const GRANT_TTL_MS = 30 * 24 * 3600_000;
/** Scopes asked when a client asks none: reading and posting. */
export const DEFAULT_SCOPES: Scope[] = ['read', 'messages:write'];

const digest = (secret: string) => createHash('sha256').update(secret).digest('hex');
const newSecret = (prefix: string) => `${prefix}${randomBytes(32).toString('base64url')}`;

interface ClientRow {
  client_id: string;
  client_name: string | null;
  redirect_uris: string[];
  metadata: OAuthClientInformationFull;
}

interface AuthorizationRow {
  id: string;
  client_id: string;
  redirect_uri: string;
  code_challenge: string;
  state: string | null;
  scopes: Scope[];
  resource: string | null;
  expires_at: Date;
  decided_at: Date | null;
  user_id: string | null;
  parent_key_id: string | null;
  granted_scopes: Scope[] | null;
  conversation_ids: string[] | null;
  code_expires_at: Date | null;
  used_at: Date | null;
  key_id: string | null;
}

interface GrantRow {
  id: string;
  client_id: string;
  workspace_id: string;
  user_id: string;
  parent_key_id: string;
  key_id: string;
  scopes: Scope[] | null;
  conversation_ids: string[] | null;
  expires_at: Date;
}

// ---- clients (RFC 7591) -----------------------------------------------------

/**
 * Stores a client the SDK's registration handler validated. Every client is a
 * public one (PKCE, no secret): the SDK would compare a secret in clear, and
 * none is kept; the answer says `token_endpoint_auth_method: none`.
 */
export async function registerClient(rt: Runtime, info: OAuthClientInformationFull): Promise<OAuthClientInformationFull> {
  const { client_secret: _secret, client_secret_expires_at: _expiry, ...rest } = info;
  const client: OAuthClientInformationFull = { ...rest, token_endpoint_auth_method: 'none' };
  await rt.db('oauth_clients').insert({
    client_id: client.client_id,
    client_name: client.client_name?.slice(0, 200) ?? null,
    redirect_uris: client.redirect_uris,
    metadata: JSON.stringify(client),
  });
  return client;
}

export async function findClient(rt: Runtime, clientId: string): Promise<OAuthClientInformationFull | undefined> {
  const row = await rt.db<ClientRow>('oauth_clients').where({ client_id: clientId }).first();
  return row?.metadata;
}

/** A client's name as people see it: its registered name, else its first redirect's host. */
const clientLabel = (client: Pick<ClientRow, 'client_name' | 'redirect_uris'>) => client.client_name?.trim() || hostOf(client.redirect_uris[0] ?? '') || 'an MCP client';
const hostOf = (uri: string) => {
  try {
    return new URL(uri).host;
  } catch {
    return '';
  }
};

// ---- the authorization request and the consent ---------------------------------

/** Records an authorization request the SDK's handler validated (client, redirect URI, PKCE); its id goes to the consent screen. */
export async function startAuthorization(
  rt: Runtime,
  o: { clientId: string; redirectUri: string; codeChallenge: string; state?: string | undefined; scopes: Scope[]; resource?: string | undefined },
): Promise<string> {
  const [row] = await rt
    .db('oauth_authorizations')
    .insert({
      client_id: o.clientId,
      redirect_uri: o.redirectUri,
      code_challenge: o.codeChallenge,
      state: o.state ?? null,
      scopes: o.scopes,
      resource: o.resource ?? null,
      expires_at: new Date(Date.now() + REQUEST_TTL_MS),
    })
    .returning('id');
  await pruneExpired(rt);
  return (row as { id: string }).id;
}

/**
 * Requests and codes a day past their end (kept that long so a code used twice
 * is still recognised), and grants past theirs, a batch at a time as new
 * requests come: nothing else writes these tables.
 */
async function pruneExpired(rt: Runtime): Promise<void> {
  await rt.db.raw(`DELETE FROM oauth_authorizations WHERE id IN (SELECT id FROM oauth_authorizations WHERE expires_at < now() - interval '1 day' LIMIT 100)`);
  await rt.db.raw(`DELETE FROM oauth_grants WHERE id IN (SELECT id FROM oauth_grants WHERE expires_at < now() LIMIT 100)`);
}

async function pendingAuthorization(db: Knex | Knex.Transaction, id: string, lock = false): Promise<AuthorizationRow & ClientRow> {
  if (!isUuid(id)) throw notFound('Authorization request');
  const query = db('oauth_authorizations as a')
    .join('oauth_clients as c', 'c.client_id', 'a.client_id')
    .where('a.id', id)
    .whereNull('a.decided_at')
    .where('a.expires_at', '>', db.fn.now())
    .first('a.*', 'c.client_name', 'c.redirect_uris', 'c.metadata');
  const row = (await (lock ? query.forUpdate() : query)) as (AuthorizationRow & ClientRow) | undefined;
  if (!row) throw notFound('Authorization request (it expired, was decided already, or never existed)');
  return row;
}

/** What the consent screen shows: who asks, where the answer goes, what for. */
export async function describeAuthorization(rt: Runtime, id: string) {
  const row = await pendingAuthorization(rt.db, id);
  return {
    id: row.id,
    client: { id: row.client_id, name: clientLabel(row), uri: row.metadata.client_uri ?? null },
    redirect_uri: row.redirect_uri,
    redirect_host: hostOf(row.redirect_uri),
    scopes: row.scopes,
    resource: row.resource,
    expires_at: row.expires_at,
  };
}

const withQuery = (uri: string, values: Record<string, string | null>) => {
  const url = new URL(uri);
  for (const [name, value] of Object.entries(values)) if (value !== null) url.searchParams.set(name, value);
  return url.href;
};

/**
 * The person's answer, with the key they are signed in with. Approving issues
 * a one-time code bound to that key, the scopes chosen (among those asked, and
 * within the key's) and the conversations chosen (each one they can read);
 * denying answers the client access_denied. Either way the answer is where
 * the browser goes next: the client's redirect URI.
 */
export async function decideAuthorization(
  rt: Runtime,
  actor: Actor,
  id: string,
  decision: { approve: boolean; scopes?: Scope[] | undefined; conversation_ids?: string[] | undefined },
): Promise<{ redirect_to: string }> {
  return rt.db.transaction(async (trx) => {
    const row = await pendingAuthorization(trx, id, true);
    const audit = { workspaceId: actor.workspaceId, actor, target: { type: 'oauth_client' as const, id: row.client_id } };
    const about = { client_id: row.client_id, client_name: clientLabel(row), redirect_host: hostOf(row.redirect_uri) };
    if (!decision.approve) {
      await trx('oauth_authorizations').where({ id }).update({ decided_at: trx.fn.now(), user_id: actor.userId });
      await recordAudit(trx, { ...audit, action: 'oauth.denied', details: about });
      return { redirect_to: withQuery(row.redirect_uri, { error: 'access_denied', error_description: 'The person declined the request', state: row.state }) };
    }
    const scopes = decision.scopes ?? row.scopes;
    const unasked = scopes.filter((s) => !row.scopes.includes(s));
    if (unasked.length) throw invalid(`scopes: ${unasked.join(', ')} was not asked for by the client`);
    if (scopes.length === 0) throw invalid('scopes: choose at least one');
    const conversationIds = decision.conversation_ids?.length ? [...new Set(decision.conversation_ids)] : null;
    // Within the consenting key: a scope it lacks is 403, a conversation it cannot read 404 (as POST /api-keys).
    narrowLimits(actor, { scopes, conversationIds });
    if (conversationIds) await requireReadableIds(trx, actor, conversationIds);
    const code = newSecret('axoc_');
    await trx('oauth_authorizations')
      .where({ id })
      .update({
        decided_at: trx.fn.now(),
        user_id: actor.userId,
        parent_key_id: actor.keyId,
        granted_scopes: scopes,
        conversation_ids: conversationIds,
        code_hash: digest(code),
        code_expires_at: new Date(Date.now() + CODE_TTL_MS),
      });
    await recordAudit(trx, { ...audit, action: 'oauth.consented', details: { ...about, scopes, conversation_ids: conversationIds } });
    return { redirect_to: withQuery(row.redirect_uri, { code, state: row.state }) };
  });
}

// ---- the token endpoint -------------------------------------------------------

const badGrant = (why: string) => new InvalidGrantError(why);

/**
 * The PKCE challenge of a live, unused code of this client (the SDK checks the
 * verifier against it before the exchange). A code presented again after its
 * exchange revokes the key it gave (RFC 6749 §4.1.2: it may have been stolen).
 */
export async function challengeForCode(rt: Runtime, clientId: string, code: string): Promise<string> {
  const row: Pick<AuthorizationRow, 'code_challenge' | 'code_expires_at' | 'used_at' | 'key_id'> | undefined = await rt
    .db('oauth_authorizations')
    .where({ code_hash: digest(code), client_id: clientId })
    .first('code_challenge', 'code_expires_at', 'used_at', 'key_id');
  if (row?.used_at && row.key_id) await rt.db.transaction((trx) => revokeKeyTrees(rt, trx, [row.key_id!]));
  if (!row || row.used_at || !row.code_expires_at || new Date(row.code_expires_at).getTime() <= Date.now()) throw badGrant('The authorization code is unknown, used or expired');
  return row.code_challenge;
}

/** The caller a stored key stands for (the consenting key of a grant), or null when it is gone. */
async function actorOfKey(trx: Knex.Transaction, keyId: string): Promise<Actor | null> {
  const row = await trx('api_keys as k')
    .join('users as u', 'u.id', 'k.user_id')
    .where('k.id', keyId)
    .whereNull('k.revoked_at')
    .whereNull('u.deactivated_at')
    .first('k.id as key_id', 'k.scopes', 'k.conversation_ids', 'u.id as user_id', 'u.workspace_id', 'u.role', 'u.is_agent');
  if (!row) return null;
  return { keyId: row.key_id, userId: row.user_id, workspaceId: row.workspace_id, role: row.role, isAgent: row.is_agent, scopes: row.scopes ?? null, conversationIds: row.conversation_ids ?? null };
}

/**
 * An access key for a grant, made from the consenting key (so it never
 * outlives it, never does more, and is revoked with it), named after the
 * client so the person recognises it in their key list.
 */
async function issueAccessKey(rt: Runtime, trx: Knex.Transaction, parent: Actor, clientName: string, limits: { scopes: Scope[] | null; conversationIds: string[] | null }) {
  try {
    return await issueChildKeyIn(
      trx,
      parent,
      { name: `MCP: ${clientName}`.slice(0, 80), expiresAt: new Date(Date.now() + ACCESS_TOKEN_TTL_S * 1000), scopes: limits.scopes, conversationIds: limits.conversationIds },
      rt.presenters.apiKey,
    );
  } catch (error) {
    // The consenting key was revoked or expired, or can no longer reach what was granted.
    if (error instanceof AppError) throw badGrant(`The grant ended: ${error.message}`);
    throw error;
  }
}

function tokensOf(key: { key: string; expires_at: Date | null }, refreshToken: string, scopes: Scope[] | null): OAuthTokens {
  const expiresIn = key.expires_at ? Math.max(1, Math.round((new Date(key.expires_at).getTime() - Date.now()) / 1000)) : ACCESS_TOKEN_TTL_S;
  return { access_token: key.key, token_type: 'Bearer', expires_in: expiresIn, refresh_token: refreshToken, scope: (scopes ?? [...SCOPES]).join(' ') };
}

/**
 * Exchanges a code (once: the row is claimed by an UPDATE, so two exchanges
 * racing get one key between them) for an access key and a refresh token.
 */
export async function exchangeCode(rt: Runtime, client: OAuthClientInformationFull, code: string, redirectUri: string | undefined): Promise<OAuthTokens> {
  const hash = digest(code);
  const outcome = await rt.db.transaction(async (trx) => {
    const [row] = (await trx('oauth_authorizations')
      .where({ code_hash: hash, client_id: client.client_id })
      .whereNull('used_at')
      .where('code_expires_at', '>', trx.fn.now())
      .update({ used_at: trx.fn.now() })
      .returning('*')) as AuthorizationRow[];
    // Claimed by a racing exchange since the challenge was read.
    if (!row) return { error: badGrant('The authorization code is unknown, used or expired') };
    // RFC 6749 §4.1.3: the redirect URI of the request, if sent, must be the same.
    if (redirectUri !== undefined && redirectUri !== row.redirect_uri) return { error: badGrant('redirect_uri differs from the authorization request\'s') };
    const parent = await actorOfKey(trx, row.parent_key_id!);
    if (!parent) return { error: badGrant('The key that approved this request was revoked') };
    const limits = { scopes: row.granted_scopes, conversationIds: row.conversation_ids };
    const issued = await issueAccessKey(rt, trx, parent, clientLabel({ client_name: client.client_name ?? null, redirect_uris: client.redirect_uris }), limits);
    const refreshToken = newSecret('axor_');
    const parentExpiry = (await trx('api_keys').where({ id: parent.keyId }).first('expires_at')) as { expires_at: Date | null };
    const grantEnd = Math.min(Date.now() + GRANT_TTL_MS, parentExpiry.expires_at ? new Date(parentExpiry.expires_at).getTime() : Infinity);
    await trx('oauth_authorizations').where({ id: row.id }).update({ key_id: issued.id });
    await trx('oauth_grants').insert({
      client_id: client.client_id,
      workspace_id: parent.workspaceId,
      user_id: parent.userId,
      parent_key_id: parent.keyId,
      key_id: issued.id,
      refresh_token_hash: digest(refreshToken),
      scopes: limits.scopes,
      conversation_ids: limits.conversationIds,
      expires_at: new Date(grantEnd),
    });
    await recordAudit(trx, {
      workspaceId: parent.workspaceId,
      action: 'oauth.token_issued',
      actor: parent,
      target: { type: 'api_key', id: issued.id },
      details: { client_id: client.client_id, grant_type: 'authorization_code', scopes: limits.scopes, conversation_ids: limits.conversationIds },
    });
    return { tokens: tokensOf(issued, refreshToken, limits.scopes) };
  });
  if ('error' in outcome) throw outcome.error;
  return outcome.tokens;
}

/**
 * Rotates a refresh token: a new access key (made from the consenting key
 * again) and a new refresh token; the old key is revoked and the old token
 * no longer works. A grant whose key the person revoked (in the key list) is
 * over: refreshing it is refused and the grant removed.
 */
export async function refreshGrant(rt: Runtime, client: OAuthClientInformationFull, refreshToken: string, asked: string[] | undefined): Promise<OAuthTokens> {
  const outcome = await rt.db.transaction(async (trx) => {
    const grant = (await trx('oauth_grants')
      .where({ refresh_token_hash: digest(refreshToken), client_id: client.client_id })
      .where('expires_at', '>', trx.fn.now())
      .forUpdate()
      .first()) as GrantRow | undefined;
    if (!grant) return { error: badGrant('The refresh token is unknown, used or expired') };
    const current = (await trx('api_keys').where({ id: grant.key_id }).first('revoked_at')) as { revoked_at: Date | null } | undefined;
    const parent = await actorOfKey(trx, grant.parent_key_id);
    if (!current || current.revoked_at || !parent) {
      await trx('oauth_grants').where({ id: grant.id }).delete();
      return { error: badGrant('The grant was revoked') };
    }
    // A refresh may narrow the scopes (RFC 6749 §6), never widen them.
    const scopes = asked?.length ? (asked as Scope[]) : grant.scopes;
    if (asked?.length && grant.scopes && asked.some((s) => !grant.scopes!.includes(s as Scope))) return { error: badGrant('A refresh cannot add scopes') };
    const limits = { scopes, conversationIds: grant.conversation_ids };
    const issued = await issueAccessKey(rt, trx, parent, clientLabel({ client_name: client.client_name ?? null, redirect_uris: client.redirect_uris }), limits);
    await revokeKeyTrees(rt, trx, [grant.key_id]);
    const next = newSecret('axor_');
    await trx('oauth_grants').where({ id: grant.id }).update({ key_id: issued.id, refresh_token_hash: digest(next), scopes, refreshed_at: trx.fn.now() });
    await recordAudit(trx, {
      workspaceId: grant.workspace_id,
      action: 'oauth.token_issued',
      actor: parent,
      target: { type: 'api_key', id: issued.id },
      details: { client_id: client.client_id, grant_type: 'refresh_token', scopes, conversation_ids: grant.conversation_ids },
    });
    return { tokens: tokensOf(issued, next, scopes) };
  });
  if ('error' in outcome) throw outcome.error;
  return outcome.tokens;
}

/** RFC 7009: a client ends its own grant with its refresh token or access key; anything else changes nothing. */
export async function revokeToken(rt: Runtime, client: OAuthClientInformationFull, token: string): Promise<void> {
  const hash = digest(token);
  await rt.db.transaction(async (trx) => {
    const grant = (await trx('oauth_grants')
      .where({ client_id: client.client_id })
      .where((q) => q.where({ refresh_token_hash: hash }).orWhereIn('key_id', trx('api_keys').select('id').where({ key_hash: hash })))
      .first()) as GrantRow | undefined;
    if (!grant) return;
    await revokeKeyTrees(rt, trx, [grant.key_id]);
    await trx('oauth_grants').where({ id: grant.id }).delete();
  });
}
