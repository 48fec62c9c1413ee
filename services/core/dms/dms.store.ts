import type { Db } from '../../../shared/db/knex.js';
import type { ChannelRow } from '../channels/channels.presenter.js';

export const countActiveUsers = async (db: Db, workspaceId: string, ids: string[]) =>
  Number(
    (await db('users').where({ workspace_id: workspaceId }).whereIn('id', ids).whereNull('deactivated_at').count<{ c: string }>('* as c').first())?.c ?? 0,
  );

/** Inserts the conversation unless the same set of people already has one (race-safe on the unique member_key). */
export const insertConversation = async (db: Db, c: { workspace_id: string; kind: 'dm' | 'group_dm'; member_key: string; created_by: string }) => {
  const rows = await db.raw(
    `INSERT INTO channels (workspace_id, kind, member_key, created_by, is_private)
     VALUES (?, ?, ?, ?, true)
     ON CONFLICT (workspace_id, member_key) WHERE kind <> 'channel' DO NOTHING
     RETURNING *`,
    [c.workspace_id, c.kind, c.member_key, c.created_by],
  );
  return rows.rows[0] as ChannelRow | undefined;
};

export const findConversationByKey = (db: Db, workspaceId: string, memberKey: string) =>
  db<ChannelRow>('channels').where({ workspace_id: workspaceId, member_key: memberKey }).whereNot('kind', 'channel').first();

/** The user's conversations, newest first (channel_members_user, then channels by primary key). */
export const listConversations = (
  db: Db,
  o: { workspaceId: string; userId: string; before?: number; limit: number; conversationIds?: readonly string[] | null },
): Promise<ChannelRow[]> =>
  db('channels as c')
    .join('channel_members as cm', 'cm.channel_id', 'c.id')
    .where({ 'cm.user_id': o.userId, 'c.workspace_id': o.workspaceId })
    .whereIn('c.kind', ['dm', 'group_dm'])
    .modify((q) => {
      if (o.before !== undefined) q.where('c.seq', '<', o.before);
      // A key limited to conversations lists only those (shared/scopes.ts).
      if (o.conversationIds) q.whereIn('c.id', o.conversationIds);
    })
    .orderBy('c.seq', 'desc')
    .limit(o.limit + 1)
    .select('c.*');
