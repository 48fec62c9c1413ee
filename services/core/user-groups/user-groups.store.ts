import type { Db } from '../../../shared/db/knex.js';
import { isUuid } from '../../../shared/ids.js';
import type { UserGroupRow } from './user-groups.presenter.js';

/** A group with its active members' ids, in the order they were added. */
const GROUP_COLUMNS = `g.*, coalesce((SELECT array_agg(gm.user_id::text ORDER BY u.seq) FROM user_group_members gm
                                 JOIN users u ON u.id = gm.user_id AND u.deactivated_at IS NULL
                                WHERE gm.group_id = g.id), '{}') AS member_ids`;

export const findGroup = async (db: Db, workspaceId: string, id: string): Promise<UserGroupRow | undefined> =>
  isUuid(id) ? ((await db.raw(`SELECT ${GROUP_COLUMNS} FROM user_groups g WHERE g.id = ? AND g.workspace_id = ?`, [id, workspaceId])).rows[0] as UserGroupRow | undefined) : undefined;

export async function listGroups(db: Db, workspaceId: string, o: { after?: number; limit: number }): Promise<UserGroupRow[]> {
  const { rows } = await db.raw(`SELECT ${GROUP_COLUMNS} FROM user_groups g WHERE g.workspace_id = ? AND g.seq > ? ORDER BY g.seq LIMIT ?`, [workspaceId, o.after ?? 0, o.limit + 1]);
  return rows as UserGroupRow[];
}

/**
 * Serialises the changes of handles in a workspace (groups here, user names
 * checked against them) for the rest of the transaction: two creations of the
 * same handle, as a group and as a user, cannot both see it free.
 */
export const lockHandles = (db: Db, workspaceId: string) => db.raw(`SELECT pg_advisory_xact_lock(hashtext('axid:handles:' || ?))`, [workspaceId]);

/** Whether an active user of the workspace is named `handle`, or a group other than `exceptGroupId` has it. */
export async function handleTaken(db: Db, workspaceId: string, handle: string, exceptGroupId?: string): Promise<boolean> {
  const user = await db('users').where({ workspace_id: workspaceId, name: handle }).whereNull('deactivated_at').first('id');
  if (user) return true;
  const group = await db('user_groups')
    .where({ workspace_id: workspaceId, handle })
    .modify((q) => {
      if (exceptGroupId) q.whereNot('id', exceptGroupId);
    })
    .first('id');
  return group !== undefined;
}

/** Whether a group of the workspace has this handle (a user's new name is checked against it). */
export const isGroupHandle = async (db: Db, workspaceId: string, name: string) =>
  (await db('user_groups').where({ workspace_id: workspaceId, handle: name }).first('id')) !== undefined;

/** The ids among `ids` that are not active users of the workspace. */
export async function strangers(db: Db, workspaceId: string, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const found = await db('users').where({ workspace_id: workspaceId }).whereNull('deactivated_at').whereIn('id', ids).pluck('id');
  const known = new Set(found as string[]);
  return ids.filter((id) => !known.has(id));
}

export async function insertGroup(db: Db, row: { workspace_id: string; handle: string; name: string; description: string; created_by: string }): Promise<string> {
  const [created] = await db('user_groups').insert(row).returning('id');
  return (created as { id: string }).id;
}

export async function updateGroup(db: Db, id: string, patch: Partial<Pick<UserGroupRow, 'handle' | 'name' | 'description'>>): Promise<boolean> {
  return (await db('user_groups').where({ id }).update({ ...patch, updated_at: db.fn.now() })) === 1;
}

/** Replaces the member list (the group row locked by the caller's update). */
export async function setMembers(db: Db, groupId: string, userIds: string[]): Promise<void> {
  await db('user_group_members').where({ group_id: groupId }).delete();
  if (userIds.length > 0) await db('user_group_members').insert(userIds.map((user_id) => ({ group_id: groupId, user_id })));
}

export const deleteGroup = async (db: Db, workspaceId: string, id: string) => (await db('user_groups').where({ id, workspace_id: workspaceId }).delete()) === 1;

// Mentions (user-groups.mentions.ts).

/** The groups of the workspace with these handles: id and handle. */
export const groupsByHandle = (db: Db, workspaceId: string, handles: string[]) =>
  db('user_groups').where({ workspace_id: workspaceId }).whereIn('handle', handles).select('id', 'handle') as Promise<{ id: string; handle: string }[]>;
