import { runPrepared, type Db, type Knex, type PreparedStatement } from '../../../shared/db/knex.js';
import { isUuid } from '../../../shared/ids.js';
import { emailIdentity } from '../../../shared/identity.js';
import type { WorkspaceRow } from '../workspaces/workspaces.presenter.js';
import type { UserRow } from './users.presenter.js';

export const findActiveUser = async (db: Db, workspaceId: string, userId: string): Promise<UserRow | undefined> =>
  isUuid(userId)
    ? db<UserRow>('users').where({ workspace_id: workspaceId, id: userId }).whereNull('deactivated_at').first()
    : undefined;

export const listActiveUsers = (db: Db, workspaceId: string, o: { after?: number; limit: number; isAgent?: boolean }) =>
  db<UserRow>('users')
    .where({ workspace_id: workspaceId })
    .whereNull('deactivated_at')
    .modify((q) => {
      if (o.after !== undefined) q.where('seq', '>', o.after);
      if (o.isAgent !== undefined) q.where('is_agent', o.isAgent);
    })
    .orderBy('seq')
    .limit(o.limit + 1);

export const countActiveHumans = async (db: Db, workspaceId: string): Promise<number> => {
  const row = await db('users')
    .where({ workspace_id: workspaceId, is_agent: false })
    .whereNull('deactivated_at')
    .count<{ count: string }>('* as count')
    .first();
  return Number(row?.count ?? 0);
};

export const countActiveOwners = async (db: Db, workspaceId: string): Promise<number> => {
  const row = await db('users')
    .where({ workspace_id: workspaceId, role: 'owner' })
    .whereNull('deactivated_at')
    .count<{ count: string }>('* as count')
    .first();
  return Number(row?.count ?? 0);
};

export const insertUser = async (
  db: Db,
  user: Pick<UserRow, 'workspace_id' | 'name' | 'display_name' | 'avatar_url' | 'role' | 'is_agent'> & Partial<Pick<UserRow, 'email' | 'password_hash'>>,
): Promise<UserRow> => {
  const [row] = await db<UserRow>('users').insert(withEmailKey(user)).returning('*');
  return row as UserRow;
};

/**
 * The stored identity key beside an address (shared/identity.ts): written with
 * every address, compared by equality. Callers validated the address (the
 * Email schema, single sign-on's claim check); one without a key stores none.
 */
const withEmailKey = <T extends { email?: string | null }>(row: T): T & { email_key?: string | null } =>
  row.email === undefined ? row : { ...row, email: row.email === null ? null : row.email.trim(), email_key: row.email === null ? null : (emailIdentity(row.email) ?? null) };

export const updateUser = async (
  db: Db,
  userId: string,
  patch: Partial<Pick<UserRow, 'name' | 'display_name' | 'avatar_url' | 'role' | 'email'>> & { suggested_prompts?: string },
): Promise<UserRow> => {
  const [row] = await db('users').where({ id: userId }).update(withEmailKey(patch)).returning('*');
  return row as UserRow;
};

/** Removal keeps the row (messages keep their author) and ends every key; channels.store deleteAllMemberships ends the memberships. */
export const deactivateUser = async (db: Db, userId: string): Promise<void> => {
  await db('users').where({ id: userId }).update({ deactivated_at: db.fn.now() });
  await db('api_keys').where({ user_id: userId }).whereNull('revoked_at').update({ revoked_at: db.fn.now() });
};

/** A removed (deactivated) user of the workspace, locked for reactivating. */
export const findRemovedUserForUpdate = async (trx: Knex.Transaction, workspaceId: string, userId: string): Promise<UserRow | undefined> =>
  isUuid(userId) ? trx<UserRow>('users').where({ workspace_id: workspaceId, id: userId }).whereNotNull('deactivated_at').forUpdate().first() : undefined;

/** Brings a removed user back (their keys stay revoked: deactivateUser ended them). */
export const reactivateUser = async (db: Db, userId: string): Promise<UserRow> => {
  const [row] = await db<UserRow>('users').where({ id: userId }).update({ deactivated_at: null }).returning('*');
  return row as UserRow;
};

export const findChannelsByIds = (db: Db, ids: string[]) =>
  ids.length === 0 ? Promise.resolve([]) : db('channels').whereIn('id', ids).select('id', 'name', 'is_private');

/**
 * What a stream opening reads, in one query (every opening runs it, so it is
 * a prepared statement: shared/db/knex.ts runPrepared): the user holding a
 * key and the user's workspace while the key and the user are active (the
 * init event), and the conversations the user is a member of (the gateway's
 * routing index). Read on the primary, after the gateway registered the
 * opening: a revocation or membership change committed after this snapshot
 * reaches the gateway as an event it then applies (services/gateway/hub.ts).
 */
const FIND_STREAM_HOLDER: PreparedStatement = {
  name: 'axid_find_stream_holder',
  text: `SELECT u.id, u.seq, u.workspace_id, u.name, u.display_name, u.avatar_url, u.role, u.is_agent, u.created_at, u.deactivated_at,
                w.id AS w_id, w.name AS w_name, w.settings AS w_settings, w.created_at AS w_created_at, k.expires_at AS k_expires_at,
                ARRAY(SELECT cm.channel_id FROM channel_members cm WHERE cm.user_id = u.id) AS channel_ids
           FROM api_keys k
           JOIN users u ON u.id = k.user_id
           JOIN workspaces w ON w.id = u.workspace_id
          WHERE k.id = $1 AND k.revoked_at IS NULL AND u.deactivated_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())`,
};

export interface StreamHolder {
  user: UserRow;
  workspace: WorkspaceRow;
  keyExpiresAt: Date | null;
  /** The channels and conversations the user is a member of. */
  channelIds: string[];
}

/** The holder of a key still valid (not revoked, not expired), with what a stream of theirs needs; undefined otherwise. */
export const findStreamHolder = async (db: Knex, keyId: string): Promise<StreamHolder | undefined> => {
  const { rows } = await runPrepared<
    UserRow & { w_id: string; w_name: string; w_settings: WorkspaceRow['settings']; w_created_at: Date; k_expires_at: Date | null; channel_ids: string[] }
  >(db, FIND_STREAM_HOLDER, [keyId]);
  const row = rows[0];
  if (!row) return undefined;
  const { w_id, w_name, w_settings, w_created_at, k_expires_at, channel_ids, ...user } = row;
  return { user, workspace: { id: w_id, name: w_name, settings: w_settings, created_at: w_created_at }, keyExpiresAt: k_expires_at, channelIds: channel_ids };
};
