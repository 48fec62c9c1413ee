// INTERIM — replaced at merge by the messages module (branch `conv`).
//
// `insertWebhookMessage` has the signature of `postMessage(rt, {...})` from
// services/api/modules/messages/messages.service.ts and is called from ONE
// place (webhooks.service.ts). At merge: delete this file, import postMessage
// there, and use the messages presenter in webhooks.jobs.ts.
import sanitizeHtml from 'sanitize-html';
import type { Db } from '../../../../shared/db/knex.js';
import { recordEvents } from '../../../../shared/events.js';
import type { Runtime } from '../../../../shared/runtime.js';

export interface MessageRow {
  id: string;
  seq: number;
  workspace_id: string;
  channel_id: string;
  author_id: string | null;
  thread_id: string | null;
  content: string;
  content_json: object | null;
  metadata: { type: string; data: Record<string, unknown> } | null;
  card_origin: string | null;
  mentioned_user_ids: string[];
  display: Record<string, string> | null;
  webhook_id: string | null;
  created_at: Date;
  edited_at: Date | null;
}

/** The Message object of contract §4 (a webhook message has no thread or reactions yet). */
export const presentMessage = (row: MessageRow) => ({
  id: row.id,
  channel_id: row.channel_id,
  author_id: row.author_id,
  content: row.content,
  content_json: row.content_json,
  metadata: row.metadata,
  thread_id: row.thread_id,
  thread: null,
  reactions: [],
  card_origin: row.card_origin,
  mentioned_user_ids: row.mentioned_user_ids,
  display: row.display,
  webhook_id: row.webhook_id,
  created_at: row.created_at,
  edited_at: row.edited_at,
});

export type MessageObject = ReturnType<typeof presentMessage>;

/** HTML in content is sanitized on write; plain text and markdown pass unchanged. */
export const cleanContent = (content: string) => (/<[a-zA-Z!/]/.test(content) ? sanitizeHtml(content) : content);

export async function insertWebhookMessage(
  rt: Runtime,
  input: {
    workspaceId: string;
    channelId: string;
    authorId: string | null;
    content: string;
    metadata?: { type: string; data: Record<string, unknown> };
    display?: Record<string, string> | null;
    webhookId?: string;
  },
): Promise<MessageObject> {
  return rt.db.transaction(async (trx) => {
    const [row] = await trx<MessageRow>('messages')
      .insert({
        workspace_id: input.workspaceId,
        channel_id: input.channelId,
        author_id: input.authorId,
        content: cleanContent(input.content),
        metadata: input.metadata ? (JSON.stringify(input.metadata) as never) : null,
        display: input.display ? (JSON.stringify(input.display) as never) : null,
        webhook_id: input.webhookId ?? null,
      })
      .returning('*');
    const message = presentMessage(row as MessageRow);
    await recordEvents(trx, [
      {
        type: 'message.created',
        to: { scope: 'channel', workspace_id: input.workspaceId, channel_id: input.channelId },
        data: { message },
      },
    ]);
    return message;
  });
}

/** The worker's rendering of a webhook message: new content and content_json, and message.updated. */
export async function updateRenderedMessage(trx: Db, messageId: string, patch: { content: string; content_json: object | null }) {
  const [row] = await trx<MessageRow>('messages')
    .where({ id: messageId })
    .update({ content: cleanContent(patch.content), content_json: patch.content_json ? (JSON.stringify(patch.content_json) as never) : null })
    .returning('*');
  if (!row) return undefined;
  const message = presentMessage(row as MessageRow);
  await recordEvents(trx, [
    {
      type: 'message.updated',
      to: { scope: 'channel', workspace_id: row.workspace_id, channel_id: row.channel_id },
      data: { message },
    },
  ]);
  return message;
}
