// Queries of the retention job (contract §16; docs/operations.md "Retention").
// Each statement touches at most one batch of rows, so none holds its locks
// for long; a big history goes in many short transactions.
import type { Db } from '../../../shared/db/knex.js';
import { isUuid } from '../../../shared/ids.js';

/** The metadata `type` of a message that carries an uploaded file (the web app's, docs/web.md). */
export const FILE_MESSAGE_TYPE = 'axid.file';

export interface RetainedChannel {
  id: string;
  seq: number;
  workspace_id: string;
  retention_days: number;
}

/**
 * Conversations (channels, DMs, group DMs) with a retention in force, after
 * `after` by seq: the channel's own once set (null there keeps for ever),
 * else the workspace's settings.retention_days.
 */
export async function retainedChannels(db: Db, after: number, limit: number): Promise<RetainedChannel[]> {
  const res = await db.raw(
    `SELECT c.id, c.seq, c.workspace_id, d.days AS retention_days
       FROM channels c
       JOIN workspaces w ON w.id = c.workspace_id
       CROSS JOIN LATERAL (SELECT CASE WHEN c.retention_set THEN c.retention_days ELSE (w.settings->>'retention_days')::int END AS days) d
      WHERE c.seq > ? AND d.days IS NOT NULL
      ORDER BY c.seq
      LIMIT ?`,
    [after, limit],
  );
  return res.rows.map((r: RetainedChannel) => ({ ...r, seq: Number(r.seq) }));
}

/**
 * Up to `limit` of a channel's top-level messages written before `cutoff`
 * (migration 250). A posted message's created_at is taken as it is posted, so
 * in a conversation it follows seq: the walk takes the oldest by seq
 * (messages_channel_seq) up to the first one written at or after the cutoff,
 * which no later post can precede. Messages that published no event
 * (event_xid NULL: imported history, which carries its old times under new
 * seqs) may sit anywhere in seq: they come by their own index,
 * messages_unpublished_channel_created. A walk reads at most `limit` rows
 * beyond what it returns.
 */
export async function expiredRoots(db: Db, channelId: string, cutoff: Date, limit: number): Promise<string[]> {
  const res = await db.raw(
    `WITH walk AS (
       SELECT id, seq, created_at FROM messages WHERE channel_id = ? AND thread_id IS NULL ORDER BY seq LIMIT ?
     )
     SELECT id FROM walk WHERE seq < coalesce((SELECT min(seq) FROM walk WHERE created_at >= ?), 9223372036854775807)
     UNION
     SELECT id FROM (
       SELECT id FROM messages WHERE channel_id = ? AND thread_id IS NULL AND event_xid IS NULL AND created_at < ? ORDER BY created_at LIMIT ?
     ) unpublished
     LIMIT ?`,
    [channelId, limit, cutoff, channelId, cutoff, limit, limit],
  );
  return res.rows.map((r: { id: string }) => r.id);
}

export interface DeletedMessage {
  id: string;
  file_id: string | null;
}

// What a deleted message leaves to clean up beyond its own keys: the file it carried.
const RETURNING_FILE = `id, CASE WHEN metadata->>'type' = '${FILE_MESSAGE_TYPE}' THEN metadata->'data'->>'file_id' END AS file_id`;

/**
 * Deletes up to `limit` replies of these roots (messages_thread_seq). Their
 * reactions, edits, search words, renders and interactions follow by their
 * foreign keys.
 */
export async function deleteRepliesOf(db: Db, rootIds: string[], limit: number): Promise<DeletedMessage[]> {
  const res = await db.raw(
    `DELETE FROM messages WHERE id IN (SELECT id FROM messages WHERE thread_id = ANY(?::uuid[]) LIMIT ?) RETURNING ${RETURNING_FILE}`,
    [rootIds, limit],
  );
  return res.rows;
}

/** Deletes these top-level messages (their replies gone first: deleteRepliesOf), with their thread rows by foreign key. */
export async function deleteRoots(db: Db, rootIds: string[]): Promise<DeletedMessage[]> {
  const res = await db.raw(`DELETE FROM messages WHERE id = ANY(?::uuid[]) AND thread_id IS NULL RETURNING ${RETURNING_FILE}`, [rootIds]);
  return res.rows;
}

/** Deletes the workspace's files of these ids: how many, and their stored objects' keys to delete once committed. */
export async function deleteFiles(db: Db, workspaceId: string, fileIds: string[]): Promise<{ count: number; keys: string[] }> {
  const ids = fileIds.filter(isUuid);
  if (ids.length === 0) return { count: 0, keys: [] };
  const rows: { storage_key: string; thumbnail_key: string | null }[] = await db('files')
    .where({ workspace_id: workspaceId })
    .whereIn('id', ids)
    .delete()
    .returning(['storage_key', 'thumbnail_key']);
  return { count: rows.length, keys: rows.flatMap((r) => (r.thumbnail_key ? [r.storage_key, r.thumbnail_key] : [r.storage_key])) };
}
