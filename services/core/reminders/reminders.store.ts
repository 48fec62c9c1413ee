import type { Db } from '../../../shared/db/knex.js';
import type { ReminderRow } from './reminders.presenter.js';

const TABLE = 'reminders';

export async function insertReminder(db: Db, row: Pick<ReminderRow, 'workspace_id' | 'user_id' | 'text' | 'message_id' | 'channel_id' | 'remind_at'>): Promise<ReminderRow> {
  const [created] = await db(TABLE).insert(row).returning('*');
  return created as ReminderRow;
}

export const findReminder = (db: Db, id: string) => db<ReminderRow>(TABLE).where({ id }).first();

/** The user's own, newest first (reminders_user_seq). */
export const listReminders = (db: Db, o: { userId: string; before?: number; limit: number }): Promise<ReminderRow[]> =>
  db<ReminderRow>(TABLE)
    .where({ user_id: o.userId })
    .modify((q) => {
      if (o.before !== undefined) q.where('seq', '<', o.before);
    })
    .orderBy('seq', 'desc')
    .limit(o.limit + 1);

export const deleteWhileScheduled = (db: Db, id: string) => db(TABLE).where({ id, status: 'scheduled' }).delete();

/** The reminder's one transition out of `scheduled`: false when it left it already. */
export async function settle(db: Db, id: string, outcome: { status: 'sent'; sent_message_id: string } | { status: 'failed'; error: string }): Promise<boolean> {
  return (await db(TABLE).where({ id, status: 'scheduled' }).update(outcome)) === 1;
}
