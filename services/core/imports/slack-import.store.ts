// The import's writes: each batch in one transaction, each table in one
// statement of arrays (unnest), never one round trip per message.
import type { Db, Knex } from '../../../shared/db/knex.js';

/** Arrays go to pg whole (as Postgres arrays); knex's binding type does not list arrays holding nulls. */
const arrays = (values: unknown[]) => values as readonly Knex.Value[];

export type MapKind = 'user' | 'bot' | 'conversation' | 'message' | 'file';

/** Slack key → Axid id of one kind (and, for messages, one conversation). */
export async function loadMap(db: Db, workspaceId: string, kind: MapKind, scope = ''): Promise<Map<string, string>> {
  const rows: { slack_key: string; axid_id: string }[] = await db('slack_import_map')
    .where({ workspace_id: workspaceId, kind, scope })
    .select('slack_key', 'axid_id');
  return new Map(rows.map((r) => [r.slack_key, r.axid_id]));
}

export async function insertMappings(db: Db, workspaceId: string, kind: MapKind, scope: string, pairs: { key: string; id: string }[]) {
  if (pairs.length === 0) return;
  await db.raw(
    `INSERT INTO slack_import_map (workspace_id, kind, scope, slack_key, axid_id)
     SELECT ?::uuid, ?, ?, k, i FROM unnest(?::text[], ?::uuid[]) AS u(k, i)
     ON CONFLICT DO NOTHING`,
    [workspaceId, kind, scope, pairs.map((p) => p.key), pairs.map((p) => p.id)],
  );
}

/** Slack ids of Axid ids (the way back, for export), of one kind. */
export async function slackIdsOf(db: Db, workspaceId: string, kind: MapKind): Promise<Map<string, string>> {
  const rows: { slack_key: string; axid_id: string }[] = await db('slack_import_map').where({ workspace_id: workspaceId, kind }).select('slack_key', 'axid_id');
  return new Map(rows.map((r) => [r.axid_id, r.slack_key]));
}

export interface ExistingUser {
  id: string;
  name: string;
  email_key: string | null;
}

export const activeUsers = (db: Db, workspaceId: string): Promise<ExistingUser[]> =>
  db('users').where({ workspace_id: workspaceId }).whereNull('deactivated_at').select('id', 'name', 'email_key');

export interface NewUser {
  id: string;
  name: string;
  display_name: string | null;
  email: string | null;
  /** The address as shared/identity.ts makes it (null where it cannot be compared safely), as users.store writes it. */
  email_key: string | null;
  is_agent: boolean;
  deactivated: boolean;
}

export async function insertUsers(db: Db, workspaceId: string, users: NewUser[]) {
  if (users.length === 0) return;
  await db.raw(
    `INSERT INTO users (id, workspace_id, name, display_name, email, email_key, is_agent, role, deactivated_at)
     SELECT i, ?::uuid, n, d, e, k, a, 'member', CASE WHEN x THEN now() END
       FROM unnest(?::uuid[], ?::text[], ?::text[], ?::text[], ?::text[], ?::boolean[], ?::boolean[]) AS u(i, n, d, e, k, a, x)`,
    arrays([
      workspaceId,
      users.map((u) => u.id),
      users.map((u) => u.name),
      users.map((u) => u.display_name),
      users.map((u) => u.email),
      users.map((u) => u.email_key),
      users.map((u) => u.is_agent),
      users.map((u) => u.deactivated),
    ]),
  );
}

export const publicChannelsByName = async (db: Db, workspaceId: string): Promise<Map<string, string>> => {
  const rows: { id: string; name: string }[] = await db('channels').where({ workspace_id: workspaceId, kind: 'channel', is_private: false }).select('id', 'name');
  return new Map(rows.map((r) => [r.name, r.id]));
};

export const conversationByKey = async (db: Db, workspaceId: string, memberKey: string): Promise<string | undefined> =>
  (await db('channels').where({ workspace_id: workspaceId, member_key: memberKey }).whereNot('kind', 'channel').first('id'))?.id;

export interface NewConversation {
  id: string;
  kind: 'channel' | 'dm' | 'group_dm';
  name: string | null;
  description: string;
  is_private: boolean;
  is_default: boolean;
  member_key: string | null;
  created_by: string | null;
  created_at: Date;
  archived_at: Date | null;
}

export async function insertConversation(db: Db, workspaceId: string, c: NewConversation) {
  await db('channels').insert({ ...c, workspace_id: workspaceId });
}

export interface NewMessage {
  id: string;
  channel_id: string;
  author_id: string | null;
  thread_id: string | null;
  content: string;
  content_json: string | null;
  metadata: string | null;
  mentioned_user_ids: string;
  display: string | null;
  created_at: Date;
  edited_at: Date | null;
  has_reactions: boolean;
  pinned_at: Date | null;
}

export interface NewReaction {
  message_id: string;
  user_id: string;
  emoji: string;
  created_at: Date;
}

export interface NewFile {
  id: string;
  uploader_id: string | null;
  name: string;
  size: number;
  content_type: string;
  storage_key: string;
  created_at: Date;
}

export interface Batch {
  messages: NewMessage[];
  /** Message mappings: (conversation scope, ts) → message id. */
  keys: { scope: string; key: string; id: string }[];
  reactions: NewReaction[];
  /** Replies per root: count and newest reply time. */
  threads: Map<string, { channelId: string; count: number; last: Date }>;
}

/**
 * Writes one batch of messages (in the order given: seq follows it), their
 * mappings, reactions and thread records, and their search words, in the
 * caller's transaction. event_xid stays NULL: imported history publishes no
 * message.created (migration 080), and commit_by stays NULL.
 */
export async function writeMessages(trx: Knex.Transaction, workspaceId: string, b: Batch) {
  if (b.messages.length > 0) {
    const m = b.messages;
    await trx.raw(
      `WITH m AS (
         INSERT INTO messages (id, workspace_id, channel_id, author_id, thread_id, content, content_json, metadata,
                               mentioned_user_ids, display, created_at, edited_at, has_reactions, pinned_at)
         SELECT r.i, ?::uuid, r.c, r.a, r.t, r.body, r.cj::json, r.md::json, r.mu::uuid[], r.d::json, r.ca, r.ea, r.hr, r.pa
           FROM unnest(?::uuid[], ?::uuid[], ?::uuid[], ?::uuid[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[],
                       ?::timestamptz[], ?::timestamptz[], ?::boolean[], ?::timestamptz[])
                WITH ORDINALITY AS r(i, c, a, t, body, cj, md, mu, d, ca, ea, hr, pa, n)
          ORDER BY r.n
         RETURNING id, workspace_id, channel_id, seq, content
       )
       INSERT INTO message_search (message_id, workspace_id, channel_id, seq, words)
       SELECT id, workspace_id, channel_id, seq, axid_search_vector(content) FROM m`,
      arrays([
        workspaceId,
        m.map((x) => x.id),
        m.map((x) => x.channel_id),
        m.map((x) => x.author_id),
        m.map((x) => x.thread_id),
        m.map((x) => x.content),
        m.map((x) => x.content_json),
        m.map((x) => x.metadata),
        m.map((x) => x.mentioned_user_ids),
        m.map((x) => x.display),
        m.map((x) => x.created_at),
        m.map((x) => x.edited_at),
        m.map((x) => x.has_reactions),
        m.map((x) => x.pinned_at),
      ]),
    );
  }
  if (b.keys.length > 0) {
    await trx.raw(
      `INSERT INTO slack_import_map (workspace_id, kind, scope, slack_key, axid_id)
       SELECT ?::uuid, 'message', s, k, i FROM unnest(?::text[], ?::text[], ?::uuid[]) AS u(s, k, i)`,
      [workspaceId, b.keys.map((k) => k.scope), b.keys.map((k) => k.key), b.keys.map((k) => k.id)],
    );
  }
  if (b.reactions.length > 0) {
    const r = b.reactions;
    await trx.raw(
      `INSERT INTO reactions (message_id, user_id, emoji, created_at)
       SELECT * FROM unnest(?::uuid[], ?::uuid[], ?::text[], ?::timestamptz[])
       ON CONFLICT DO NOTHING`,
      [r.map((x) => x.message_id), r.map((x) => x.user_id), r.map((x) => x.emoji), r.map((x) => x.created_at)],
    );
  }
  if (b.threads.size > 0) {
    const roots = [...b.threads.keys()];
    const t = [...b.threads.values()];
    await trx.raw(
      `INSERT INTO threads (root_message_id, workspace_id, channel_id, reply_count, last_reply_at, created_at)
       SELECT r, ?::uuid, c, n, l, l FROM unnest(?::uuid[], ?::uuid[], ?::int[], ?::timestamptz[]) AS u(r, c, n, l)
       ON CONFLICT (root_message_id) DO UPDATE
         SET reply_count = threads.reply_count + EXCLUDED.reply_count,
             last_reply_at = GREATEST(threads.last_reply_at, EXCLUDED.last_reply_at)`,
      [workspaceId, roots, t.map((x) => x.channelId), t.map((x) => x.count), t.map((x) => x.last)],
    );
    await trx.raw('UPDATE messages SET has_replies = true WHERE id = ANY (?::uuid[]) AND NOT has_replies', [roots]);
  }
}

export async function insertFile(db: Db, workspaceId: string, f: NewFile) {
  await db('files').insert({ ...f, workspace_id: workspaceId, status: 'processing' });
}

/** Owners and admins (who hear of a finished import). */
export const ownersAndAdmins = async (db: Db, workspaceId: string): Promise<string[]> =>
  (await db('users').where({ workspace_id: workspaceId }).whereIn('role', ['owner', 'admin']).whereNull('deactivated_at').select('id')).map((r: { id: string }) => r.id);

/** The workspace an import goes to by default: the deployment's first. */
export const firstWorkspace = async (db: Db): Promise<string | undefined> => (await db('workspaces').orderBy('created_at').first('id'))?.id;
