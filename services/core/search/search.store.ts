import type { Db } from '../../../shared/db/knex.js';
import type { JsonPage } from '../../../shared/http/envelope.js';
import type { MessageSql } from '../messages/messages.store.js';
import { CARRIES_A_FILE } from '../../../shared/db/migrations/120_file_carriers.js';

/**
 * Messages of the workspace matching `q` that `userId` can read now (public
 * channels, and the private channels and conversations it is a member of),
 * newest first, rendered by Postgres as the history page renders them (`sql`). Both
 * dictionaries' queries are OR-ed against a vector holding both
 * (axid_search_vector, migration 090), so an exclusion excludes in either
 * form. The words, the filters and the order are message_search's own (a rare
 * word through its GIN index, a common one as a newest-first walk of its
 * workspace index that stops after a page); messages is joined by primary key
 * for the page only.
 */
export async function searchMessages(
  db: Db,
  sql: MessageSql,
  o: {
    workspaceId: string;
    userId: string;
    q: string;
    channelId?: string;
    authorId?: string;
    /** ISO times, exclusive: posted before / after them. */
    postedBefore?: string;
    postedAfter?: string;
    /** Only messages carrying a file (the attachment's metadata, migration 120). */
    hasFile?: boolean;
    before?: number;
    limit: number;
    /** A key limited to conversations (shared/scopes.ts) finds messages of those only. */
    conversationIds?: readonly string[] | null;
  },
): Promise<JsonPage> {
  const where: string[] = [];
  // No words (filters only): the newest-first walk of the workspace's index, filtered.
  const words = o.q.trim() ? [o.q, o.q] : [];
  const values: (string | number | string[])[] = [...words, o.workspaceId, o.workspaceId, o.userId];
  if (o.conversationIds) {
    where.push('AND s.channel_id = ANY(?::uuid[])');
    values.push([...o.conversationIds]);
  }
  if (o.channelId) {
    where.push('AND s.channel_id = ?::uuid');
    values.push(o.channelId);
  }
  if (o.authorId) {
    where.push('AND m.author_id = ?::uuid');
    values.push(o.authorId);
  }
  if (o.postedBefore) {
    where.push('AND m.created_at < ?::timestamptz');
    values.push(o.postedBefore);
  }
  if (o.postedAfter) {
    where.push('AND m.created_at > ?::timestamptz');
    values.push(o.postedAfter);
  }
  if (o.hasFile) where.push(`AND ${CARRIES_A_FILE.replaceAll('metadata', 'm.metadata')}`);
  if (o.before !== undefined) {
    where.push('AND s.seq < ?::bigint');
    values.push(o.before);
  }
  values.push(o.limit + 1);
  const { rows } = await db.raw<{ rows: { seq: string; message: string }[] }>(
    `SELECT s.seq, ${sql.json} AS message
       FROM message_search s JOIN messages m ON m.id = s.message_id
      WHERE ${words.length ? "s.words @@ (websearch_to_tsquery('english', ?) || websearch_to_tsquery('simple', ?)) AND" : ''}
            s.workspace_id = ?::uuid
        AND s.channel_id IN (SELECT c.id FROM channels c
                              WHERE c.workspace_id = ?::uuid
                                AND ((c.kind = 'channel' AND NOT c.is_private)
                                     OR EXISTS (SELECT 1 FROM channel_members cm WHERE cm.channel_id = c.id AND cm.user_id = ?::uuid)))
        ${where.join(' ')}
      ORDER BY s.seq DESC
      LIMIT ?`,
    values,
  );
  const page = rows.slice(0, o.limit);
  return {
    data: `[${page.map((r) => r.message).join(',')}]`,
    lastSeq: page.length ? Number(page[page.length - 1]!.seq) : null,
    hasMore: rows.length > o.limit,
  };
}

/**
 * Indexes, in batches, the posts with no search words written by
 * transactions from the backfill's watermark on: those written where search
 * did not exist (level 2, or a level-2 replica during a switch to 3). Every
 * post records its transaction (event_xid, migration 080), so the watermark
 * is exact: the horizon taken before the scan (every transaction below it
 * had ended, so the scan sees all it wrote). Rows written without a
 * transaction id publish nothing and are not posts (seeds); migration 090
 * indexed what existed. Returns the count indexed.
 */
export async function indexUnsearched(db: Db, o: { batch: number }): Promise<number> {
  const { rows: horizon } = await db.raw<{ rows: { xid: string }[] }>('SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xid');
  let indexed = 0;
  let from: string | null = null;
  for (;;) {
    // A batch's last transaction is looked at again by the next one; the
    // anti-join skips what it already indexed.
    const result: { rows: { xid: string | null; added: number }[] } = await db.raw(
      `WITH todo AS (
         SELECT m.id, m.workspace_id, m.channel_id, m.seq, m.content, m.event_xid FROM messages m
          WHERE m.event_xid >= coalesce(?::xid8, (SELECT through_xid FROM search_backfill WHERE id = 1))
            AND NOT EXISTS (SELECT 1 FROM message_search s WHERE s.message_id = m.id)
          ORDER BY m.event_xid LIMIT ?
       ), added AS (
         INSERT INTO message_search (message_id, workspace_id, channel_id, seq, words)
         SELECT id, workspace_id, channel_id, seq, axid_search_vector(content) FROM todo
         ON CONFLICT (message_id) DO NOTHING RETURNING 1
       )
       SELECT max(event_xid)::text AS xid, (SELECT count(*) FROM added)::int AS added FROM todo`,
      [from, o.batch],
    );
    const row = result.rows[0]!;
    if (row.xid === null) break;
    indexed += row.added;
    from = row.xid;
  }
  await db.raw('UPDATE search_backfill SET through_xid = greatest(through_xid, ?::xid8) WHERE id = 1', [horizon[0]!.xid]);
  return indexed;
}
