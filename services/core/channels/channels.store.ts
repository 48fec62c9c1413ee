import type { Db } from '../../../shared/db/knex.js';
import type { UserRow } from '../users/users.presenter.js';
import type { ChannelRow, MemberRow } from './channels.presenter.js';

export const insertChannel = async (
  db: Db,
  row: Pick<ChannelRow, 'workspace_id' | 'name' | 'description' | 'is_private' | 'is_default' | 'parent_channel_id' | 'team_id' | 'created_by'>,
): Promise<ChannelRow> => {
  const [created] = await db<ChannelRow>('channels').insert({ ...row, kind: 'channel' }).returning('*');
  return created as ChannelRow;
};

export const updateChannel = async (db: Db, id: string, patch: Partial<Pick<ChannelRow, 'name' | 'description' | 'is_default'>>) => {
  const [row] = await db<ChannelRow>('channels').where({ id }).update(patch).returning('*');
  return row as ChannelRow;
};

/** Public channels and the private ones the user is in, oldest first (channels_workspace_seq). */
export const listVisibleChannels = (db: Db, o: { workspaceId: string; userId: string; after?: number; limit: number }): Promise<ChannelRow[]> =>
  db('channels as c')
    .where({ 'c.workspace_id': o.workspaceId, 'c.kind': 'channel' })
    .where((q) =>
      q
        .where('c.is_private', false)
        .orWhereExists(db('channel_members as cm').whereRaw('cm.channel_id = c.id').andWhere('cm.user_id', o.userId)),
    )
    .modify((q) => {
      if (o.after !== undefined) q.where('c.seq', '>', o.after);
    })
    .orderBy('c.seq')
    .limit(o.limit + 1)
    .select('c.*');

/** Inserts a membership; undefined when it already existed. */
export const insertMember = async (db: Db, m: { channel_id: string; user_id: string; workspace_id: string }): Promise<MemberRow | undefined> => {
  const [row] = await db('channel_members').insert(m).onConflict(['channel_id', 'user_id']).ignore().returning('*');
  return row as MemberRow | undefined;
};

export const deleteMember = async (db: Db, channelId: string, userId: string): Promise<boolean> =>
  (await db('channel_members').where({ channel_id: channelId, user_id: userId }).delete()) > 0;

/** A page of members with their users in one query (channel_members_channel_seq). */
export const listMembers = (
  db: Db,
  o: { channelId: string; after?: number; limit: number },
): Promise<{ member: MemberRow; user: UserRow; seq: number }[]> =>
  db('channel_members as cm')
    .join('users as u', 'u.id', 'cm.user_id')
    .where('cm.channel_id', o.channelId)
    .modify((q) => {
      if (o.after !== undefined) q.where('cm.seq', '>', o.after);
    })
    .orderBy('cm.seq')
    .limit(o.limit + 1)
    .select(
      'cm.channel_id',
      'cm.user_id',
      'cm.seq',
      'cm.created_at',
      'u.name as u_name',
      'u.display_name as u_display_name',
      'u.avatar_url as u_avatar_url',
      'u.role as u_role',
      'u.is_agent as u_is_agent',
      'u.created_at as u_created_at',
    )
    .then((rows: Record<string, any>[]) =>
      rows.map((r) => ({
        member: { channel_id: r.channel_id, user_id: r.user_id, seq: r.seq, created_at: r.created_at } as MemberRow,
        user: {
          id: r.user_id,
          name: r.u_name,
          display_name: r.u_display_name,
          avatar_url: r.u_avatar_url,
          role: r.u_role,
          is_agent: r.u_is_agent,
          created_at: r.u_created_at,
        } as UserRow,
        seq: r.seq as number,
      })),
    );

export const findActiveUser = (db: Db, workspaceId: string, userId: string): Promise<UserRow | undefined> =>
  db<UserRow>('users').where({ workspace_id: workspaceId, id: userId }).whereNull('deactivated_at').first();
