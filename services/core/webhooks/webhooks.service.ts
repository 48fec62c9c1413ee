import { randomBytes } from 'node:crypto';
import type { Actor } from '../../../shared/auth.js';
import { recordEvents } from '../../../shared/events.js';
import { AppError, forbidden, notFound } from '../../../shared/errors.js';
import { decodeCursor, pageOf } from '../../../shared/http/envelope.js';
import { recordJob } from '../../../shared/jobs.js';
import { reachesConversation } from '../../../shared/scopes.js';
import type { Runtime } from '../../../shared/runtime.js';
import { refuseArchived, requireReadable } from '../channels/channels.access.js';
import { cleanContent, postMessage, type PostMessageArgs } from '../messages/messages.service.js';
import { placeholderContent, readCompatPost, renderCompatMessage, type CompatPost, type Display } from './webhooks.compat.js';
import { canDeleteWebhook, seesAllWebhooks } from './webhooks.policy.js';
import { presentWebhook, type WebhookRow } from './webhooks.presenter.js';
import type { NativePost } from './webhooks.schemas.js';
import * as store from './webhooks.store.js';
import { recordAudit, webhookRef } from '../audit/audit.store.js';

const channelNotFound = () => new AppError('channel_not_found', 'channel_id: no such channel in this workspace (or no access to it)');

/** 24 random bytes: 192 bits, base64url (32 characters). */
export const newWebhookId = () => randomBytes(24).toString('base64url');

export async function createWebhook(rt: Runtime, actor: Actor, input: { channel_id: string; name: string }) {
  // The channels module hides existence; a hook names its 404 channel_not_found.
  const { channel } = await requireReadable(rt.db, actor, input.channel_id, 'channel', rt.access).catch((err: unknown) => {
    throw err instanceof AppError && err.code === 'not_found' ? channelNotFound() : err;
  });
  refuseArchived(channel);
  const row = await rt.db.transaction(async (trx) => {
    const hook = await store.insertWebhook(trx, {
      id: newWebhookId(),
      workspace_id: actor.workspaceId,
      channel_id: input.channel_id,
      name: input.name,
      created_by: actor.userId,
    });
    await recordAudit(trx, { workspaceId: actor.workspaceId, action: 'webhook.created', actor, target: { type: 'webhook', id: webhookRef(hook.id) }, details: { name: hook.name, channel_id: hook.channel_id } });
    return hook;
  });
  return presentWebhook(row, rt.config.publicBaseUrl);
}

export async function listWebhooks(rt: Runtime, actor: Actor, q: { limit: number; cursor?: string }) {
  const rows = await rt.reads.read(actor, (db) =>
    store.listWebhooks(db, actor.workspaceId, {
      after: decodeCursor(q.cursor),
      limit: q.limit,
      createdBy: seesAllWebhooks(actor) ? undefined : actor.userId,
      // A hook's address posts into its channel: never shown to someone who cannot read a private one.
      viewerId: actor.userId,
      conversationIds: actor.conversationIds,
    }),
  );
  return pageOf(rows, q.limit, (row: WebhookRow) => presentWebhook(row, rt.config.publicBaseUrl));
}

export async function deleteWebhook(rt: Runtime, actor: Actor, webhookId: string) {
  const hook = await store.findWebhook(rt.db, webhookId);
  // A hook of a channel outside the key's conversations is absent to it (shared/scopes.ts).
  if (!hook || hook.workspace_id !== actor.workspaceId || !reachesConversation(actor, hook.channel_id)) throw notFound('Webhook');
  if (!canDeleteWebhook(actor, hook)) throw forbidden('only the creator of a webhook, an admin or the owner deletes it');
  await rt.db.transaction(async (trx) => {
    await store.deleteWebhook(trx, hook.id);
    await recordAudit(trx, { workspaceId: actor.workspaceId, action: 'webhook.deleted', actor, target: { type: 'webhook', id: webhookRef(hook.id) }, details: { name: hook.name, channel_id: hook.channel_id, created_by: hook.created_by } });
    // Internal: every replica drops the hook from its cache of posting hooks.
    await recordEvents(rt, trx, [
      { type: 'webhook.deleted', to: { scope: 'users', workspace_id: hook.workspace_id, user_ids: [] }, data: { webhook_id: hook.id } },
    ]);
  });
}

const channelGone = () => new AppError('channel_not_found', "this webhook's channel no longer exists");

/** A hook that takes posts (its author active), cached (dropped by webhook.deleted); undefined when there is none. */
async function findPostingHook(rt: Runtime, webhookId: string): Promise<(WebhookRow & { channel_exists: boolean; channel_archived: boolean }) | undefined> {
  const cached = rt.access.getHook<WebhookRow & { channel_exists: boolean; channel_archived: boolean }>(webhookId);
  if (cached) return cached;
  const mark = rt.access.mark();
  const hook = await store.findPostingHook(rt.db, webhookId);
  if (hook?.channel_exists) rt.access.setHook(mark, webhookId, hook);
  return hook;
}

/**
 * Whether a hook takes posts: the rate limit counts a post against its hook
 * only then, and against the client address otherwise, so made-up hook ids
 * neither escape the limit nor leave a Redis key each (shared/http/rate-limit.ts).
 */
export const hookTakesPosts = async (rt: Runtime, webhookId: string) => (await findPostingHook(rt, webhookId))?.channel_exists === true;

/** The hook a post goes to, and its channel; both must still exist, and the channel take posts (not archived). */
async function postingHook(rt: Runtime, webhookId: string): Promise<WebhookRow> {
  const hook = await findPostingHook(rt, webhookId);
  if (!hook) throw notFound('Webhook');
  if (!hook.channel_exists) throw channelGone();
  refuseArchived({ archived_at: hook.channel_archived ? new Date() : null });
  return hook;
}

/**
 * Refuses a post to a hook that no longer takes posts (deleted, its author
 * removed, its channel gone), before an Idempotency-Key's stored answer is
 * replayed: a gone hook answers as one, not with its old 201.
 */
export async function checkPostingHook(rt: Runtime, webhookId: string): Promise<void> {
  await postingHook(rt, webhookId);
}

/** The one place a webhook post becomes a message: the messages module's rules, author and event. */
async function postAsHook(
  rt: Runtime,
  hook: WebhookRow,
  o: {
    content: string;
    metadata?: NativePost['metadata'];
    thread_id?: string | null;
    display?: Display | null;
    alsoInTransaction?: PostMessageArgs['alsoInTransaction'];
  },
) {
  return postMessage(rt, {
    workspaceId: hook.workspace_id,
    channelId: hook.channel_id,
    authorId: hook.created_by,
    content: o.content,
    metadata: o.metadata,
    // postMessage refuses a root that is not a top-level message of this channel.
    thread_id: o.thread_id,
    // Level 3: signed with the hook's name, unless a compatible post gives its own (HOOK_NAMES).
    display: rt.presenters.hookNames ? { username: hook.name.slice(0, 80), ...o.display } : o.display,
    webhookId: hook.id,
    alsoInTransaction: o.alsoInTransaction,
  });
}

/** `POST /hooks/{id}`: the native format, answered with the message. */
export async function postNative(rt: Runtime, webhookId: string, body: NativePost) {
  const hook = await postingHook(rt, webhookId);
  return postAsHook(rt, hook, { content: body.content, metadata: body.metadata, thread_id: body.thread_id });
}

/**
 * `POST /hooks/compat/{id}`: the chat-platform format. The text is posted at
 * once; attachments are rendered by the worker (`webhook.render`), which
 * updates the message.
 */
export async function postCompat(rt: Runtime, webhookId: string, body: unknown): Promise<void> {
  const hook = await postingHook(rt, webhookId);
  const post: CompatPost = readCompatPost(body);
  // Everything is checked before anything is written: a refusal after the
  // message is posted would answer 4xx/5xx to a sender that then retries and
  // posts it twice. The worker renders the same content again (webhooks.jobs.ts).
  // Content is what we make of the sender's fields: a refusal names them.
  if (post.attachments.length > 0) {
    try {
      cleanContent(renderCompatMessage(post.text, post.attachments, rt.presenters.textMentions).content);
    } catch (err) {
      throw renamed(err, 'attachments');
    }
  }
  // The pending render and its job commit with the message: a failure in
  // between would answer 5xx after posting, and the sender would post again.
  await postAsHook(rt, hook, {
    // Level 3: `<!here>` and `<!channel>` become `@here` and `@channel` (contract §14).
    content: placeholderContent(post, rt.presenters.textMentions),
    display: post.display,
    alsoInTransaction:
      post.attachments.length === 0
        ? undefined
        : async (trx, message) => {
            await store.insertPendingRender(trx, message.id, post.text, post.attachments);
            await recordJob(rt, trx, 'webhook.render', { messageId: message.id });
          },
  }).catch((err: unknown) => {
    // The placeholder is the text as markdown (`*b*` becomes `**b**`), or the first attachment's.
    throw renamed(err, post.text !== null ? 'text' : 'attachments');
  });
}

/** A refusal of the content made from a compatible post, naming the sender's field instead. */
const renamed = (err: unknown, field: string) =>
  err instanceof AppError && err.code === 'validation_error' ? new AppError(err.code, err.message.replace(/^content:/, `${field}:`)) : err;
