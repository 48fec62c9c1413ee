// Followed threads are found, not stored (migration 235): the threads of the
// conversations a person is a member of whose root they wrote, where they
// replied, or where the root or a reply mentions them.
import type { Db } from '../../../shared/db/knex.js';
import type { JsonPage } from '../../../shared/http/envelope.js';
import { COUNT_CAP } from '../read-state/read-state.schemas.js';

/**
 * A page of followed threads as JSON text, the thread with the newest reply
 * first; the keyset is that reply's seq (unique, so no two threads tie). The
 * candidates come from messages_author_thread_seq (replies the person wrote,
 * and roots of theirs that have replies: migration 241) and
 * messages_mentioned_users; each thread's last reply and unread count from
 * messages_thread_seq.
 */
export async function listFollowed(
  db: Db,
  messageJson: string,
  o: { workspaceId: string; userId: string; before?: number; limit: number; conversationIds: readonly string[] | null },
): Promise<JsonPage> {
  const { rows } = await db.raw<{ rows: { item: string; last_seq: string }[] }>(
    `WITH followed AS (
       SELECT coalesce(a.thread_id, a.id) AS root_id FROM messages a
        WHERE a.author_id = :user AND a.workspace_id = :ws AND (a.thread_id IS NOT NULL OR a.has_replies)
       UNION
       SELECT coalesce(n.thread_id, n.id) FROM messages n WHERE n.mentioned_user_ids @> ARRAY[:user]::uuid[] AND n.mentioned_user_ids <> '{}' AND n.workspace_id = :ws
     )
     SELECT json_build_object(
              'root', ${messageJson}::json,
              'unread_replies', (SELECT count(*) FROM (
                  SELECT 1 FROM messages x
                   WHERE x.thread_id = t.root_message_id AND x.author_id IS DISTINCT FROM :user
                     AND x.seq > greatest(coalesce(tr.last_read_seq, 0), coalesce(mine.seq, 0))
                   LIMIT ${COUNT_CAP}) u)::int,
              'last_read_message_id', tr.last_read_message_id,
              'last_reply_id', last.id)::text AS item,
            last.seq AS last_seq
       FROM followed f
       JOIN threads t ON t.root_message_id = f.root_id
       JOIN channel_members cm ON cm.channel_id = t.channel_id AND cm.user_id = :user
       JOIN messages m ON m.id = t.root_message_id
       CROSS JOIN LATERAL (SELECT x.id, x.seq FROM messages x WHERE x.thread_id = t.root_message_id ORDER BY x.seq DESC LIMIT 1) last
       LEFT JOIN LATERAL (SELECT x.seq FROM messages x WHERE x.author_id = :user AND x.thread_id = t.root_message_id AND x.thread_id IS NOT NULL ORDER BY x.seq DESC LIMIT 1) mine ON true
       LEFT JOIN thread_read_marks tr ON tr.user_id = :user AND tr.root_message_id = t.root_message_id
      WHERE (:before::bigint IS NULL OR last.seq < :before::bigint)
        AND (:limited::boolean = false OR t.channel_id = ANY(:conversations::uuid[]))
      ORDER BY last.seq DESC
      LIMIT :take`,
    {
      user: o.userId,
      ws: o.workspaceId,
      before: o.before ?? null,
      limited: o.conversationIds !== null,
      conversations: [...(o.conversationIds ?? [])],
      take: o.limit + 1,
    },
  );
  const page = rows.slice(0, o.limit);
  return { data: `[${page.map((r) => r.item).join(',')}]`, lastSeq: page.length ? Number(page.at(-1)!.last_seq) : null, hasMore: rows.length > o.limit };
}

/** Moves the person's mark in a thread forward to `seq` (never back); false when it was there already. */
export async function markRead(db: Db, o: { userId: string; rootId: string; seq: number; messageId: string }): Promise<boolean> {
  const { rowCount } = await db.raw(
    `INSERT INTO thread_read_marks (user_id, root_message_id, last_read_seq, last_read_message_id) VALUES (?, ?, ?, ?)
     ON CONFLICT (user_id, root_message_id) DO UPDATE SET last_read_seq = excluded.last_read_seq, last_read_message_id = excluded.last_read_message_id
      WHERE thread_read_marks.last_read_seq < excluded.last_read_seq`,
    [o.userId, o.rootId, o.seq, o.messageId],
  );
  return (rowCount ?? 0) > 0;
}
