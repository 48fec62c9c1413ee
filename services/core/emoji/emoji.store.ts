import type { Db } from '../../../shared/db/knex.js';
import type { CustomEmojiRow } from './emoji.presenter.js';

const TABLE = 'custom_emoji';

/** Inserts unless the name is taken in the workspace; undefined then. */
export async function insertEmoji(db: Db, row: Pick<CustomEmojiRow, 'id' | 'workspace_id' | 'name' | 'original_key' | 'created_by'>): Promise<CustomEmojiRow | undefined> {
  const [created] = await db(TABLE).insert(row).onConflict(['workspace_id', 'name']).ignore().returning('*');
  return created as CustomEmojiRow | undefined;
}

export const findEmoji = (db: Db, id: string) => db<CustomEmojiRow>(TABLE).where({ id }).first();
export const findEmojiNamed = (db: Db, workspaceId: string, name: string) => db<CustomEmojiRow>(TABLE).where({ workspace_id: workspaceId, name }).first();

/** The workspace's emoji, newest first (custom_emoji_workspace_seq), a page before `before`. */
export const listEmoji = (db: Db, o: { workspaceId: string; before?: number; limit: number }): Promise<CustomEmojiRow[]> =>
  db<CustomEmojiRow>(TABLE)
    .where({ workspace_id: o.workspaceId })
    .whereNot('status', 'failed')
    .modify((q) => {
      if (o.before !== undefined) q.where('seq', '<', o.before);
    })
    .orderBy('seq', 'desc')
    .limit(o.limit + 1);

export async function deleteEmoji(db: Db, id: string): Promise<CustomEmojiRow | undefined> {
  const [row] = await db(TABLE).where({ id }).delete().returning('*');
  return row as CustomEmojiRow | undefined;
}

export async function finishProcessing(db: Db, id: string, outcome: { status: 'ready'; image_key: string } | { status: 'failed' }): Promise<boolean> {
  return (await db(TABLE).where({ id, status: 'processing' }).update(outcome)) === 1;
}
