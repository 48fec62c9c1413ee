import type { Actor } from '../../../shared/auth.js';
import { runPrepared, type Db, type PreparedStatement } from '../../../shared/db/knex.js';
import { isUuid } from '../../../shared/ids.js';
import type { UserRow } from '../users/users.presenter.js';
import type { ChannelRow, MemberRow } from './channels.presenter.js';

export const insertChannel = async (
  db: Db,
  row: Pick<ChannelRow, 'workspace_id' | 'name' | 'description' | 'is_private' | 'is_default' | 'parent_channel_id' | 'team_id' | 'created_by'>,
): Promise<ChannelRow> => {
  const [created] = await db<ChannelRow>('channels').insert({ ...row, kind: 'channel' }).returning('*');
  return created as ChannelRow;
};

export const updateChannel = async (db: Db, id: string, patch: Partial<Pick<ChannelRow, 'name' | 'description' | 'is_default' | 'retention_days' | 'retention_set'>>) => {
  const [row] = await db<ChannelRow>('channels').where({ id }).update(patch).returning('*');
  return row as ChannelRow;
};

/** Whether a channel's parent is private (its events, sent to many, then leave the parent out). */
export const parentIsPrivate = async (db: Db, channel: ChannelRow): Promise<boolean> =>
  channel.parent_channel_id !== null && (await db('channels').where({ id: channel.parent_channel_id, is_private: true }).first('id')) !== undefined;

/**
 * A channel row's columns, named (the lists and the access lookup are prepared
 * statements, and `c.*` would change what one already prepared returns when
 * a migration adds a column, which PostgreSQL refuses): add a new column here.
 */
export const CHANNEL_COLUMNS = `c.id, c.seq, c.workspace_id, c.kind, c.name, c.description, c.is_private, c.is_default, c.parent_channel_id, c.team_id,
       c.member_key, c.created_by, c.created_at, c.archived_at, c.retention_days, c.retention_set`;

/** `parent_hidden` of a channel row `c` for the viewer whose id is parameter `$n`. */
const PARENT_HIDDEN = (n: number) => `EXISTS (SELECT 1 FROM channels p WHERE p.id = c.parent_channel_id AND p.is_private
         AND NOT EXISTS (SELECT 1 FROM channel_members pm WHERE pm.channel_id = p.id AND pm.user_id = $${n})) AS parent_hidden`;

interface VisibleChannelsShape {
  after: boolean;
  limited: boolean;
  membership: boolean;
  includeArchived: boolean;
}

/** One prepared statement per shape of the list (shared/db/knex.ts runPrepared): $1 workspace, $2 user, $3 rows, then $4 the cursor's seq and the key's conversations, where the shape has them. */
export const visibleChannelsStatement = (shape: VisibleChannelsShape): PreparedStatement => {
  const where = [`c.workspace_id = $1`, `c.kind = 'channel'`, `(NOT c.is_private OR EXISTS (SELECT 1 FROM channel_members cm WHERE cm.channel_id = c.id AND cm.user_id = $2))`];
  let n = 3;
  if (shape.after) where.push(`c.seq > $${++n}`);
  if (shape.limited) where.push(`c.id = ANY($${++n}::uuid[])`);
  if (shape.membership && !shape.includeArchived) where.push('c.archived_at IS NULL');
  const level3 = shape.membership
    ? `,
       (SELECT count(*) FROM channel_members mc WHERE mc.channel_id = c.id)::int AS member_count,
       EXISTS (SELECT 1 FROM channel_members me WHERE me.channel_id = c.id AND me.user_id = $2) AS is_member`
    : '';
  return {
    name: `axid_visible_channels_${+shape.after}${+shape.limited}${+shape.membership}${+shape.includeArchived}`,
    text: `SELECT ${CHANNEL_COLUMNS}, ${PARENT_HIDDEN(2)}${level3}
             FROM channels c
            WHERE ${where.join(' AND ')}
            ORDER BY c.seq
            LIMIT $3`,
  };
};
const VISIBLE_CHANNELS = new Map<string, PreparedStatement>();

/**
 * Public channels and the private ones the user is in, oldest first
 * (channels_workspace_seq). Level 3 (`membership`): each with its member count
 * and whether the user is in it, computed here for the page (one query, no
 * query per channel: channel_members' primary key counts them), and archived
 * ones left out unless `includeArchived`. A prepared statement per shape:
 * planned per call, the list cost this box's PostgreSQL 1.6 ms of planning for
 * 0.4 ms of work.
 */
export async function listVisibleChannels(
  db: Db,
  o: { workspaceId: string; userId: string; after?: number; limit: number; membership?: boolean; includeArchived?: boolean; conversationIds?: readonly string[] | null },
): Promise<ChannelRow[]> {
  const shape = { after: o.after !== undefined, limited: Boolean(o.conversationIds), membership: o.membership ?? false, includeArchived: (o.membership && o.includeArchived) ?? false };
  const key = `${+shape.after}${+shape.limited}${+shape.membership}${+shape.includeArchived}`;
  let statement = VISIBLE_CHANNELS.get(key);
  if (!statement) VISIBLE_CHANNELS.set(key, (statement = visibleChannelsStatement(shape)));
  const values: unknown[] = [o.workspaceId, o.userId, o.limit + 1];
  if (shape.after) values.push(o.after);
  if (shape.limited) values.push(o.conversationIds);
  return (await runPrepared<ChannelRow>(db, statement, values)).rows;
}

/** How many members a channel has. */
export const countMembers = async (db: Db, channelId: string): Promise<number> =>
  Number((await db('channel_members').where({ channel_id: channelId }).count<{ n: string }>('* as n').first())?.n ?? 0);

/** The channel row locked against concurrent archiving and pinning (FOR NO KEY UPDATE: posts, which take FOR KEY SHARE, never wait). */
export const lockChannel = (trx: Db, channelId: string) => trx<ChannelRow>('channels').where({ id: channelId }).forNoKeyUpdate().first();

/** Archives (now) or unarchives a channel; returns its row. */
export const setArchived = async (db: Db, channelId: string, archived: boolean): Promise<ChannelRow> => {
  const [row] = await db<ChannelRow>('channels').where({ id: channelId }).update({ archived_at: archived ? db.fn.now() : null } as never).returning('*');
  return row as ChannelRow;
};

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

// The other queries of channel_members, so that one module reads and writes
// memberships (the channel listings filtered by membership stay beside their
// listing: listVisibleChannels above, dms.store listConversations).

export interface Readable {
  channel: ChannelRow;
  isMember: boolean;
}

/**
 * The channel and whether the caller is a member of it, in one query: nearly
 * every request about a channel asks it when the access cache does not know,
 * so it is a prepared statement (shared/db/knex.ts runPrepared). Planned per
 * call it cost PostgreSQL 1.3 ms of planning for 0.1 ms of work (docs/bench.md,
 * "Channel access and callers planned once"). Its columns are named, not
 * `c.*`: a column added by a migration would change what a statement already
 * prepared on a connection returns, which PostgreSQL refuses.
 */
export const FIND_WITH_MEMBERSHIP: PreparedStatement = {
  name: 'axid_find_channel_with_membership',
  text: `SELECT ${CHANNEL_COLUMNS}, (cm.user_id IS NOT NULL) AS is_member, ${PARENT_HIDDEN(2)}
           FROM channels c
           LEFT JOIN channel_members cm ON cm.channel_id = c.id AND cm.user_id = $2
          WHERE c.id = $1 AND c.workspace_id = $3`,
};

export async function findWithMembership(db: Db, actor: Actor, channelId: string): Promise<Readable | undefined> {
  if (!isUuid(channelId)) return undefined;
  const { rows } = await runPrepared<ChannelRow & { is_member: boolean }>(db, FIND_WITH_MEMBERSHIP, [channelId, actor.userId, actor.workspaceId]);
  const row = rows[0];
  if (!row) return undefined;
  const { is_member, ...channel } = row;
  return { channel, isMember: is_member };
}

/**
 * Of `ids`, those `userId` may read in its workspace: public channels, and
 * private channels and conversations it is a member of (one query).
 */
export const readableIdsAmong = async (db: Db, o: { workspaceId: string; userId: string; ids: readonly string[] }): Promise<string[]> =>
  (
    await db('channels as c')
      .where('c.workspace_id', o.workspaceId)
      .whereIn('c.id', o.ids.filter(isUuid))
      .where((q) =>
        q
          .where((p) => p.where('c.kind', 'channel').andWhere('c.is_private', false))
          .orWhereExists(db('channel_members as cm').whereRaw('cm.channel_id = c.id').andWhere('cm.user_id', o.userId)),
      )
      .select('c.id')
  ).map((row: { id: string }) => row.id);

/**
 * Whether a channel the user can see (public, or private and theirs) has this
 * name; a private channel they are not in never counts (docs/decisions.md,
 * "Private channel names"). `exceptId`: the channel being renamed.
 */
export const visibleChannelNamed = async (db: Db, workspaceId: string, userId: string, name: string, exceptId?: string) =>
  (await db('channels as c')
    .where({ 'c.workspace_id': workspaceId, 'c.kind': 'channel', 'c.name': name })
    .modify((q) => {
      if (exceptId) q.whereNot('c.id', exceptId);
    })
    .where((q) =>
      q.where('c.is_private', false).orWhereExists(db('channel_members as cm').whereRaw('cm.channel_id = c.id').andWhere('cm.user_id', userId)),
    )
    .first('c.id')) !== undefined;

/** Ids of the private channels of a workspace that `userId` is not in (a subquery: what another listing must not show them). */
export const privateChannelsNotJoined = (db: Db, workspaceId: string, userId: string) =>
  db('channels as pc')
    .select('pc.id')
    .where({ 'pc.workspace_id': workspaceId, 'pc.is_private': true })
    .whereNotExists(db('channel_members as pcm').whereRaw('pcm.channel_id = pc.id').andWhere('pcm.user_id', userId));

/** Whether a user is a member of a channel or conversation now (event subscriptions decide visibility by it at delivery). */
export const isMember = async (db: Db, channelId: string, userId: string): Promise<boolean> =>
  isUuid(channelId) && (await db('channel_members').where({ channel_id: channelId, user_id: userId }).first('user_id')) !== undefined;

/** Which of these users are members of which of these channels, as `<channel id>:<user id>` (one query for a batch of events). */
export async function membershipsAmong(db: Db, channelIds: string[], userIds: string[]): Promise<Set<string>> {
  const channels = channelIds.filter(isUuid);
  if (channels.length === 0 || userIds.length === 0) return new Set();
  const rows: { channel_id: string; user_id: string }[] = await db('channel_members').whereIn('channel_id', channels).whereIn('user_id', userIds).select('channel_id', 'user_id');
  return new Set(rows.map((r) => `${r.channel_id}:${r.user_id}`));
}

export const insertMembers = (db: Db, channelId: string, workspaceId: string, userIds: string[]) =>
  db('channel_members').insert(userIds.map((user_id) => ({ channel_id: channelId, user_id, workspace_id: workspaceId })));

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

/** A removed user leaves every channel and conversation; returns the ones left. */
export const deleteAllMemberships = async (db: Db, userId: string): Promise<string[]> => {
  const left = await db('channel_members').where({ user_id: userId }).delete().returning('channel_id');
  return left.map((r: { channel_id: string }) => r.channel_id);
};

/** Adds members, leaving those already in (an import run again). Returns how many were added. */
export const insertMembersIfMissing = async (db: Db, channelId: string, workspaceId: string, userIds: string[]): Promise<number> =>
  userIds.length === 0
    ? 0
    : (await db('channel_members').insert(userIds.map((user_id) => ({ channel_id: channelId, user_id, workspace_id: workspaceId }))).onConflict(['channel_id', 'user_id']).ignore().returning('user_id')).length;

/** Every member has read up to each channel's newest top-level message (imported history starts read). */
export const markAllRead = async (db: Db, channelIds: string[]) =>
  channelIds.length === 0
    ? undefined
    : db.raw(
        `UPDATE channel_members cm SET last_read_seq = s.seq, last_read_message_id = s.id
           FROM unnest(?::uuid[]) AS c(id)
           CROSS JOIN LATERAL (SELECT id, seq FROM messages WHERE channel_id = c.id AND thread_id IS NULL ORDER BY seq DESC LIMIT 1) s
          WHERE cm.channel_id = c.id AND coalesce(cm.last_read_seq, 0) < s.seq`,
        [channelIds],
      );

/**
 * A reactivated user is back in their direct conversations: a conversation is
 * its member set (member_key), so opening one with them again finds it, and
 * it must hold them. Channels they left on removal are not rejoined. Returns
 * the conversations.
 */
export const restoreConversationMemberships = async (db: Db, workspaceId: string, userId: string): Promise<string[]> => {
  const { rows } = await db.raw<{ rows: { channel_id: string }[] }>(
    `INSERT INTO channel_members (channel_id, user_id, workspace_id)
     SELECT c.id, ?::uuid, c.workspace_id FROM channels c
      WHERE c.workspace_id = ? AND c.kind IN ('dm', 'group_dm') AND ?::text = ANY (string_to_array(c.member_key, ','))
     ON CONFLICT (channel_id, user_id) DO NOTHING
     RETURNING channel_id`,
    [userId, workspaceId, userId],
  );
  return rows.map((r) => r.channel_id);
};
