import type { Db } from '../../../shared/db/knex.js';
import type { ScheduledMessageRow } from './scheduled-messages.presenter.js';

const TABLE = 'scheduled_messages';

export async function insertScheduled(db: Db, row: Omit<ScheduledMessageRow, 'id' | 'seq' | 'status' | 'error' | 'message_id' | 'created_at'>): Promise<ScheduledMessageRow> {
  const [created] = await db(TABLE)
    .insert({
      ...row,
      content_json: row.content_json == null ? null : JSON.stringify(row.content_json),
      metadata: row.metadata == null ? null : JSON.stringify(row.metadata),
    })
    .returning('*');
  return created as ScheduledMessageRow;
}

export const findScheduled = (db: Db, id: string) => db<ScheduledMessageRow>(TABLE).where({ id }).first();

/** The author's own, newest first (scheduled_messages_author_seq). */
export const listScheduled = (db: Db, o: { authorId: string; before?: number; limit: number }): Promise<ScheduledMessageRow[]> =>
  db<ScheduledMessageRow>(TABLE)
    .where({ author_id: o.authorId })
    .modify((q) => {
      if (o.before !== undefined) q.where('seq', '<', o.before);
    })
    .orderBy('seq', 'desc')
    .limit(o.limit + 1);

/** Changes a row still scheduled; undefined when it is not (sent, failed or gone meanwhile). */
export async function updateWhileScheduled(db: Db, id: string, patch: Partial<Pick<ScheduledMessageRow, 'content' | 'content_json' | 'metadata' | 'send_at'>>) {
  const values: Record<string, unknown> = { ...patch };
  if ('content_json' in patch) values.content_json = patch.content_json == null ? null : JSON.stringify(patch.content_json);
  if ('metadata' in patch) values.metadata = patch.metadata == null ? null : JSON.stringify(patch.metadata);
  const [row] = await db(TABLE).where({ id, status: 'scheduled' }).update(values).returning('*');
  return row as ScheduledMessageRow | undefined;
}

export const deleteWhileScheduled = (db: Db, id: string) => db(TABLE).where({ id, status: 'scheduled' }).delete();

/**
 * The row's one transition out of `scheduled`, for the send time the job was
 * made for: false when it was sent, failed, deleted or moved meanwhile.
 */
export async function settle(db: Db, id: string, sendAt: Date, outcome: { status: 'sent'; message_id: string } | { status: 'failed'; error: string }): Promise<boolean> {
  const count = await db(TABLE).where({ id, status: 'scheduled', send_at: sendAt }).update(outcome);
  return count === 1;
}
