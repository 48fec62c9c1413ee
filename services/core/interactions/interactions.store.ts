import type { Db } from '../../../shared/db/knex.js';
import type { ContentDocument } from '../messages/messages.presenter.js';
import type { InteractionRow } from './interactions.presenter.js';

export interface ActionTarget {
  id: string;
  channel_id: string;
  author_id: string | null;
  content_json: ContentDocument | null;
  /** The kind of its channel: `channel`, `dm` or `group_dm`. */
  kind: string;
}

/** A message of the workspace with what a click needs: its buttons, author and channel kind. */
export const findActionTarget = (db: Db, workspaceId: string, messageId: string) =>
  db('messages as m')
    .join('channels as c', 'c.id', 'm.channel_id')
    .where({ 'm.id': messageId, 'm.workspace_id': workspaceId })
    .first('m.id', 'm.channel_id', 'm.author_id', 'm.content_json', 'c.kind') as Promise<ActionTarget | undefined>;

export const insertInteraction = async (db: Db, row: Omit<InteractionRow, 'id' | 'created_at'> & { workspace_id: string }) =>
  (await db('interactions').insert(row).returning(['id', 'message_id', 'channel_id', 'action_id', 'user_id', 'created_at']))[0] as InteractionRow;
