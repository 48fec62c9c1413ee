// API keys: one format for humans and agents, stored as a SHA-256 hash (keys
// are 256-bit random, so a slow hash buys nothing), resolved to the caller.
import { createHash, randomBytes } from 'node:crypto';
import { runPrepared, type Db, type PreparedStatement } from './db/knex.js';
import type { AccessCache } from './access-cache.js';
import { z } from 'zod';
import { AppError } from './errors.js';
import { Timestamp, named } from './http/responses.js';
import { existsAt, fromLevel, type FeatureLevel } from './feature-level.js';
import { KEY_SCOPES, SCOPES, type KeyLimits, type Scope } from './scopes.js';

export type WorkspaceRole = 'owner' | 'admin' | 'member';

/**
 * Who is calling: resolved once per request from the key, with the key's
 * limits (shared/scopes.ts; both null for a key without them).
 */
export interface Actor extends KeyLimits {
  keyId: string;
  userId: string;
  workspaceId: string;
  role: WorkspaceRole;
  isAgent: boolean;
  /** Where this request came from (set per request by shared/http/route.ts; the audit log records it). */
  origin?: RequestOrigin;
}

/** The client address and user agent of a request, as the audit log keeps them. */
export interface RequestOrigin {
  ip: string | null;
  userAgent: string | null;
}

export const hashKey = (key: string) => createHash('sha256').update(key).digest('hex');

export function generateApiKey(): { key: string; prefix: string; hash: string } {
  const key = `axid_${randomBytes(32).toString('base64url')}`;
  return { key, prefix: key.slice(0, 12), hash: hashKey(key) };
}

/** For a key chosen by the operator (BOOTSTRAP_ADMIN_KEY). */
export const describeKey = (key: string) => ({ key, prefix: key.slice(0, 12), hash: hashKey(key) });

export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer[ \t]+([A-Za-z0-9_\-.~+/]+=*)\s*$/i.exec(header);
  return match?.[1];
}

const unauthorized = () => new AppError('unauthorized', 'a valid API key is required: send Authorization: Bearer <API_KEY>');

/** Resolves a presented key to its caller, or throws 401 unauthorized / key_expired. */
/** The caller of a key the access cache knows, without a promise (the hot path); undefined otherwise. */
export const cachedActor = (token: string | undefined, cache: AccessCache): Actor | undefined => (token ? cache.getActor(hashKey(token)) : undefined);

/**
 * The key and its user, by the key's hash: every request whose caller the
 * access cache does not know asks it, so it is a prepared statement
 * (shared/db/knex.ts runPrepared), planned once per connection.
 */
const FIND_KEY_HOLDER: PreparedStatement = {
  name: 'axid_find_key_holder',
  text: `SELECT k.id AS key_id, k.expires_at, k.revoked_at, k.scopes, k.conversation_ids,
                u.id AS user_id, u.workspace_id, u.role, u.is_agent, u.deactivated_at
           FROM api_keys k JOIN users u ON u.id = k.user_id
          WHERE k.key_hash = $1`,
};

interface KeyHolderRow {
  key_id: string;
  expires_at: Date | null;
  revoked_at: Date | null;
  scopes: Scope[] | null;
  conversation_ids: string[] | null;
  user_id: string;
  workspace_id: string;
  role: WorkspaceRole;
  is_agent: boolean;
  deactivated_at: Date | null;
}

export async function authenticate(db: Db, token: string | undefined, cache?: AccessCache): Promise<Actor> {
  if (!token) throw unauthorized();
  const keyHash = hashKey(token);
  const cached = cache?.getActor(keyHash);
  if (cached) return cached;
  const mark = cache?.mark() ?? 0;
  const { rows } = await runPrepared<KeyHolderRow>(db, FIND_KEY_HOLDER, [keyHash]);
  const row = rows[0];
  if (!row || row.revoked_at || row.deactivated_at) throw unauthorized();
  if (row.expires_at && new Date(row.expires_at).getTime() <= Date.now()) {
    throw new AppError('key_expired', 'this API key has expired: create a new one');
  }
  const actor: Actor = {
    keyId: row.key_id,
    userId: row.user_id,
    workspaceId: row.workspace_id,
    role: row.role,
    isAgent: row.is_agent,
    scopes: row.scopes ?? null,
    conversationIds: row.conversation_ids ?? null,
  };
  cache?.setActor(mark, keyHash, actor, row.expires_at ? new Date(row.expires_at) : null);
  return actor;
}

export interface ApiKeyRow {
  id: string;
  seq: number;
  workspace_id: string;
  user_id: string;
  name: string;
  prefix: string;
  created_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
  scopes: Scope[] | null;
  conversation_ids: string[] | null;
}

/** A key's limits as its row stores them. */
export const limitsOfRow = (row: Pick<ApiKeyRow, 'scopes' | 'conversation_ids'>): KeyLimits => ({
  scopes: row.scopes ?? null,
  conversationIds: row.conversation_ids ?? null,
});

export const ApiKeySchema = named(
  'ApiKey',
  z.strictObject({
    id: z.string(),
    name: z.string(),
    prefix: z.string().describe('The first characters of the key, to recognise it'),
    created_at: Timestamp,
    expires_at: Timestamp.nullable(),
    scopes: fromLevel(
      KEY_SCOPES,
      z.array(z.enum(SCOPES)).nullable().describe('What the key may do (docs/security.md, "Scopes"); null: everything its user\'s role allows'),
    ),
    conversation_ids: fromLevel(
      KEY_SCOPES,
      z.array(z.string()).nullable().describe('The only channels and conversations the key reaches; null: all its user may read'),
    ),
  }),
);

/** A key as issued: the secret is shown in this response only. */
export const IssuedApiKeySchema = named('IssuedApiKey', ApiKeySchema.extend({ key: z.string().describe('The secret; shown once') }));

export type PresentApiKey = (row: ApiKeyRow) => z.infer<typeof ApiKeySchema>;

/** A key as a feature level shows it: its limits from level 3 on (services/core/presenters.ts binds it). */
export const apiKeyPresenter =
  (level: FeatureLevel): PresentApiKey =>
  (row) => ({
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    created_at: row.created_at,
    expires_at: row.expires_at,
    ...(existsAt(KEY_SCOPES, level) ? { scopes: row.scopes ?? null, conversation_ids: row.conversation_ids ?? null } : {}),
  }) as z.infer<typeof ApiKeySchema>;

/** A key as level 2 shows it (keys made where no runtime's presenters are at hand show only their secret). */
export const presentApiKey: PresentApiKey = apiKeyPresenter(2);

/**
 * Issues a key for a user (bootstrap, user creation, POST /api-keys, sign-in).
 * The secret is returned here and never again: only its hash is stored.
 * `limits`: the key's scopes and conversations (shared/scopes.ts), already
 * checked against whatever the key is made from (narrowLimits).
 */
export async function issueApiKey(
  db: Db,
  o: {
    workspaceId: string;
    userId: string;
    name: string;
    expiresAt?: Date | null;
    key?: string;
    parentKeyId?: string | null;
    limits?: KeyLimits;
  },
  present: PresentApiKey = presentApiKey,
): Promise<z.infer<typeof IssuedApiKeySchema>> {
  const material = o.key ? describeKey(o.key) : generateApiKey();
  const [row] = await db<ApiKeyRow>('api_keys')
    .insert({
      workspace_id: o.workspaceId,
      user_id: o.userId,
      name: o.name,
      prefix: material.prefix,
      key_hash: material.hash,
      expires_at: o.expiresAt ?? null,
      parent_key_id: o.parentKeyId ?? null,
      scopes: o.limits?.scopes ?? null,
      conversation_ids: o.limits?.conversationIds ?? null,
    } as never)
    .returning('*');
  return { ...present(row as ApiKeyRow), key: material.key };
}
