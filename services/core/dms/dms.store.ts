import { runPrepared, type Db, type PreparedStatement } from '../../../shared/db/knex.js';
import { CHANNEL_COLUMNS } from '../channels/channels.store.js';
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

/** One prepared statement per shape (shared/db/knex.ts runPrepared): $1 user, $2 workspace, $3 rows, then the cursor's seq and the key's conversations where the shape has them. */
const conversationsStatement = (before: boolean, limited: boolean): PreparedStatement => {
  const where = [`cm.user_id = $1`, `c.workspace_id = $2`, `c.kind IN ('dm', 'group_dm')`];
  let n = 3;
  if (before) where.push(`c.seq < $${++n}`);
  if (limited) where.push(`c.id = ANY($${++n}::uuid[])`);
  return {
    name: `axid_conversations_${+before}${+limited}`,
    text: `SELECT ${CHANNEL_COLUMNS} FROM channels c JOIN channel_members cm ON cm.channel_id = c.id
            WHERE ${where.join(' AND ')}
            ORDER BY c.seq DESC
            LIMIT $3`,
  };
};
/** By [has a cursor][limited to some conversations]. */
export const CONVERSATION_LIST_STATEMENTS = [false, true].map((before) => [false, true].map((limited) => conversationsStatement(before, limited)));

/**
 * The user's conversations, newest first (channel_members_user, then channels
 * by primary key); a key limited to conversations lists only those
 * (shared/scopes.ts). Prepared: planning it per call cost more than running it.
 */
export const listConversations = async (
  db: Db,
  o: { workspaceId: string; userId: string; before?: number; limit: number; conversationIds?: readonly string[] | null },
): Promise<ChannelRow[]> => {
  const values: unknown[] = [o.userId, o.workspaceId, o.limit + 1];
  if (o.before !== undefined) values.push(o.before);
  if (o.conversationIds) values.push(o.conversationIds);
  return (await runPrepared<ChannelRow>(db, CONVERSATION_LIST_STATEMENTS[+(o.before !== undefined)]![+Boolean(o.conversationIds)]!, values)).rows;
};
