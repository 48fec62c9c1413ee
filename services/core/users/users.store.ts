import type { Db } from '../../../shared/db/knex.js';
import { isUuid } from '../../../shared/ids.js';
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
  user: Pick<UserRow, 'workspace_id' | 'name' | 'display_name' | 'avatar_url' | 'role' | 'is_agent'>,
): Promise<UserRow> => {
  const [row] = await db<UserRow>('users').insert(user).returning('*');
  return row as UserRow;
};

export const updateUser = async (
  db: Db,
  userId: string,
  patch: Partial<Pick<UserRow, 'name' | 'display_name' | 'avatar_url' | 'role'>>,
): Promise<UserRow> => {
  const [row] = await db<UserRow>('users').where({ id: userId }).update(patch).returning('*');
  return row as UserRow;
};

/** Removal keeps the row (messages keep their author) and ends every key and membership. */
export const deactivateUser = async (db: Db, userId: string): Promise<string[]> => {
  await db('users').where({ id: userId }).update({ deactivated_at: db.fn.now() });
  await db('api_keys').where({ user_id: userId }).whereNull('revoked_at').update({ revoked_at: db.fn.now() });
  const left = await db('channel_members').where({ user_id: userId }).delete().returning('channel_id');
  return left.map((r: { channel_id: string }) => r.channel_id);
};

/** Joins a new agent to every default channel; returns the channels joined. */
export const joinDefaultChannels = async (db: Db, workspaceId: string, userId: string) =>
  db
    .insert(
      db('channels')
        .where({ workspace_id: workspaceId, kind: 'channel', is_default: true })
        .select('id as channel_id', db.raw('? as user_id', [userId]), 'workspace_id'),
    )
    .into(db.raw('?? (channel_id, user_id, workspace_id)', ['channel_members']))
    .returning('channel_id')
    .then((rows: { channel_id: string }[]) => rows.map((r) => r.channel_id));

export const findChannelsByIds = (db: Db, ids: string[]) =>
  ids.length === 0 ? Promise.resolve([]) : db('channels').whereIn('id', ids).select('id', 'name', 'is_private');
