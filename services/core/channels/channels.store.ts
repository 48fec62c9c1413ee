import type { Db } from '../../../shared/db/knex.js';
import type { ChannelRow } from './channels.presenter.js';

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
