import { privateChannelsNotJoined } from '../channels/channels.store.js';
import type { Db } from '../../../shared/db/knex.js';
import type { CompatAttachment } from './webhooks.compat.js';
import type { WebhookRow } from './webhooks.presenter.js';

/** Ids are base64url of 24 random bytes (32 characters); anything else names nothing. */
const WEBHOOK_ID = /^[A-Za-z0-9_-]{32}$/;

export const insertWebhook = async (db: Db, row: Pick<WebhookRow, 'id' | 'workspace_id' | 'channel_id' | 'name' | 'created_by'>) => {
  const [created] = await db<WebhookRow>('incoming_webhooks').insert(row).returning('*');
  return created as WebhookRow;
};

/** By primary key only: the id is the secret, so it is never compared in application code. */
export const findWebhook = async (db: Db, id: string): Promise<WebhookRow | undefined> =>
  WEBHOOK_ID.test(id) ? db<WebhookRow>('incoming_webhooks').where({ id }).first() : undefined;

/** Hooks of the workspace, less those on private channels `viewerId` is not in (whoever made them). */
export const listWebhooks = (
  db: Db,
  workspaceId: string,
  o: { after?: number; limit: number; createdBy?: string; viewerId: string; conversationIds?: readonly string[] | null },
) =>
  db<WebhookRow>('incoming_webhooks')
    .where({ workspace_id: workspaceId })
    .whereNotIn('channel_id', privateChannelsNotJoined(db, workspaceId, o.viewerId))
    .modify((q) => {
      if (o.createdBy !== undefined) q.where('created_by', o.createdBy);
      // A key limited to conversations (shared/scopes.ts) sees the hooks of those only.
      if (o.conversationIds) q.whereIn('channel_id', o.conversationIds);
      if (o.after !== undefined) q.where('seq', '>', o.after);
    })
    .orderBy('seq')
    .limit(o.limit + 1);

export const deleteWebhook = (db: Db, id: string) => db('incoming_webhooks').where({ id }).delete();

/**
 * A hook to post through, whether its channel still exists and is archived (level 3): one query on
 * the posting hot path. A hook whose creator was removed from the workspace
 * names nothing, as if deleted: it posted as them, with their keys (docs/webhooks.md).
 */
export const findPostingHook = async (db: Db, id: string): Promise<(WebhookRow & { channel_exists: boolean; channel_archived: boolean }) | undefined> =>
  WEBHOOK_ID.test(id)
    ? db('incoming_webhooks as h')
        .join('users as u', 'u.id', 'h.created_by')
        .leftJoin('channels as c', 'c.id', 'h.channel_id')
        .where('h.id', id)
        .whereNull('u.deactivated_at')
        .first('h.*', db.raw('(c.id IS NOT NULL) AS channel_exists'), db.raw('(c.archived_at IS NOT NULL) AS channel_archived'))
    : undefined;

// Attachments waiting for the worker to render them into their message.

export const insertPendingRender = (db: Db, messageId: string, text: string | null, attachments: CompatAttachment[]) =>
  db('webhook_renders').insert({ message_id: messageId, text, attachments: JSON.stringify(attachments) });

export const takePendingRender = async (db: Db, messageId: string) =>
  db('webhook_renders').where({ message_id: messageId }).forUpdate().first() as Promise<
    { message_id: string; text: string | null; attachments: CompatAttachment[] } | undefined
  >;

export const deletePendingRender = (db: Db, messageId: string) => db('webhook_renders').where({ message_id: messageId }).delete();
