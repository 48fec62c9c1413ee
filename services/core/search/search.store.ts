import type { Db } from '../../../shared/db/knex.js';
import type { JsonPage } from '../../../shared/http/envelope.js';
import type { MessageSql } from '../messages/messages.store.js';

/**
 * Messages of the workspace matching `q` that `userId` can read now (public
 * channels, and the private channels and conversations it is a member of),
 * newest first, rendered by Postgres as the history page renders them (`sql`). Both
 * dictionaries' queries are OR-ed against a vector holding both (migration
 * 024), so an exclusion excludes in either form.
 */
export async function searchMessages(
  db: Db,
  sql: MessageSql,
  o: { workspaceId: string; userId: string; q: string; channelId?: string; authorId?: string; before?: number; limit: number },
): Promise<JsonPage> {
  const where: string[] = [];
  const values: (string | number)[] = [o.q, o.q, o.workspaceId, o.workspaceId, o.userId];
  if (o.channelId) {
    where.push('AND m.channel_id = ?::uuid');
    values.push(o.channelId);
  }
  if (o.authorId) {
    where.push('AND m.author_id = ?::uuid');
    values.push(o.authorId);
  }
  if (o.before !== undefined) {
    where.push('AND m.seq < ?::bigint');
    values.push(o.before);
  }
  values.push(o.limit + 1);
  const { rows } = await db.raw<{ rows: { seq: string; message: string }[] }>(
    `SELECT m.seq, ${sql.json}::text AS message
       FROM messages m
      WHERE m.search @@ (websearch_to_tsquery('english', ?) || websearch_to_tsquery('simple', ?))
        AND m.workspace_id = ?::uuid
        AND m.channel_id IN (SELECT c.id FROM channels c
                              WHERE c.workspace_id = ?::uuid
                                AND ((c.kind = 'channel' AND NOT c.is_private)
                                     OR EXISTS (SELECT 1 FROM channel_members cm WHERE cm.channel_id = c.id AND cm.user_id = ?::uuid)))
        ${where.join(' ')}
      ORDER BY m.seq DESC
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
