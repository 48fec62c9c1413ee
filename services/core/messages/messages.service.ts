// Messages, threads, reactions and typing. Channels and DM conversations share
// this code: the routes pass which kind the path names, and requireReadable
// hides everything else.
import { randomUUID } from 'node:crypto';
import type { Actor } from '../../../shared/auth.js';
import type { Knex } from '../../../shared/db/knex.js';
import { validateContentJson } from '../../../shared/blocks/index.js';
import { AppError, forbidden, invalid, notFound } from '../../../shared/errors.js';
import { publishEphemeral, recordEvents, type AxidEvent } from '../../../shared/events.js';
import { decodeCursor, list, listJson, pageOf, type PageQuery } from '../../../shared/http/envelope.js';
import { parseOrThrow } from '../../../shared/validation.js';
import { isUuid } from '../../../shared/ids.js';
import type { Runtime } from '../../../shared/runtime.js';
import { cachedReadable, requireReadable, type ChannelKind } from '../channels/channels.access.js';
import { canDeleteMessage, canEditMessage, canParticipate } from './messages.policy.js';
import { presentMessageEdit, presentReaction, type ContentDocument, type MessageDisplay, type MessageObject, type MessageRow } from './messages.presenter.js';
import { sanitizeAppend, sanitizeContent, settledLength } from './messages.sanitize.js';
import { Content, MAX_CONTENT, Metadata, isEmoji, type AppendInput, type FinishInput, type ListMessagesInput, type PostMessageInput, type UpdateMessageInput } from './messages.schemas.js';
import { charCount } from '../channels/channels.schemas.js';
import * as store from './messages.store.js';
import { readableFile } from '../files/files.access.js';
import { FILE_METADATA_TYPE } from '../files/files.presenter.js';
import { removeStoredFile } from '../files/files.removal.js';
import * as filesStore from '../files/files.store.js';
import { recordJob } from '../../../shared/jobs.js';
import { unfurlJob, unfurlLinks } from '../unfurls/unfurls.service.js';
import type { Unfurl } from './messages.presenter.js';

const channelScope = (workspaceId: string, channelId: string): AxidEvent['to'] => ({
  scope: 'channel',
  workspace_id: workspaceId,
  channel_id: channelId,
});

const joinFirst = (kind: ChannelKind) =>
  forbidden(
    kind === 'channel'
      ? 'you are not a member of this channel: join it first (POST /channels/{channel_id}/members with your own user_id)'
      : 'you are not a member of this conversation',
  );

const badThread = () => invalid('thread_id: must name a top-level message of this channel');

/** Validates content_json with the shared block validator; errors name the node path. */
function checkContentJson(rt: Runtime, doc: unknown) {
  if (doc === undefined || doc === null) return { content_json: null, card_origin: null, mentioned_user_ids: [] as string[] };
  const result = validateContentJson(doc, { trackerHosts: rt.config.trackerHosts, codeHosts: rt.config.codeHosts });
  if (!result.valid) {
    const where = result.path ? `content_json.${result.path}` : 'content_json';
    const reason = result.message.slice((result.path || 'document').length).replace(/^:\s*/, '');
    throw new AppError('validation_error', `${where}: ${reason}`);
  }
  // Admitted by the validator (which serialises its URLs), so it has the shape the presenter declares.
  return { content_json: result.document as ContentDocument, card_origin: result.card_origin, mentioned_user_ids: [...new Set(result.mentioned_user_ids)] };
}

/**
 * The limit is on what is stored: sanitizing can grow content (a bare `<`
 * becomes `&lt;`, an unquoted attribute gets quotes, an unsafe autolink an
 * escape), so 40,000 characters sent could be twice that stored. Refused, not
 * cut: a cut could end inside what sanitizing wrote.
 */
function checkStoredLength(length: number) {
  if (length > MAX_CONTENT) {
    throw invalid(`content: is ${length} characters once sanitized (HTML escaped, attributes quoted, unsafe links rewritten); at most ${MAX_CONTENT} are stored`);
  }
}

/** Content as stored: sanitized, not empty, within the limit (every write of content but appends, which check the whole). */
export function cleanContent(content: string) {
  const clean = sanitizeContent(content);
  if (clean.trim().length === 0) throw invalid('content: is empty once unsafe HTML is removed');
  checkStoredLength(charCount(clean));
  return clean;
}

/**
 * Level 3 (contract §17): a message carrying a file (`axid.file` metadata)
 * lets the readers of its conversation read the file, so its author must be
 * able to read the file already; otherwise it answers as a file that is not
 * there. At level 2 every member reads every file and nothing is checked.
 */
async function checkCarriedFile(rt: Runtime, author: { userId: string | null; workspaceId: string }, metadata: { type: string; data: Record<string, unknown> } | null | undefined) {
  if (!rt.presenters.filesFollowConversations || metadata?.type !== FILE_METADATA_TYPE) return;
  const fileId = metadata.data.file_id;
  if (fileId === undefined) return;
  const readable = typeof fileId === 'string' && author.userId !== null && (await readableFile(rt, { userId: author.userId, workspaceId: author.workspaceId }, fileId));
  if (!readable) throw invalid('metadata.data.file_id: no file you can read has this id (upload it with POST /files first)');
}

export interface PostMessageArgs {
  workspaceId: string;
  channelId: string;
  /** The posting user; null for a webhook post with no user behind it. */
  authorId: string | null;
  content: string;
  content_json?: unknown;
  metadata?: { type: string; data: Record<string, unknown> } | null;
  thread_id?: string | null;
  /** Display overrides of a webhook post (username, icon_emoji, icon_url). */
  display?: MessageDisplay | null;
  webhookId?: string | null;
  /** A streamed agent reply (level 3): appended to by its author until finished. */
  streaming?: boolean;
  /** Writes that commit with the message or not at all (a compat hook's pending render and its job). */
  alsoInTransaction?: (trx: Knex.Transaction, message: MessageObject) => Promise<void>;
}

/**
 * Posts a message for an author the caller has already authorised (the HTTP
 * handler checks membership; incoming webhooks own their channel). Applies every
 * content rule (limits, sanitizing, block validation, thread_id), writes the
 * message, its thread count and its `message.created` event in one statement,
 * and returns the Message object.
 */
export async function postMessage(rt: Runtime, args: PostMessageArgs): Promise<MessageObject> {
  const content = cleanContent(parseOrThrow(Content, args.content, 'content'));
  const metadata = args.metadata == null ? null : parseOrThrow(Metadata, args.metadata, 'metadata');
  await checkCarriedFile(rt, { userId: args.authorId, workspaceId: args.workspaceId }, metadata);
  const threadId = args.thread_id ?? null;
  if (threadId !== null && !isUuid(threadId)) throw badThread();
  const blocks = checkContentJson(rt, args.content_json);
  const row: MessageRow = {
    id: randomUUID(),
    seq: 0,
    workspace_id: args.workspaceId,
    channel_id: args.channelId,
    author_id: args.authorId,
    thread_id: threadId,
    content,
    content_json: blocks.content_json,
    metadata,
    card_origin: blocks.card_origin,
    mentioned_user_ids: blocks.mentioned_user_ids,
    display: args.display ?? null,
    webhook_id: args.webhookId ?? null,
    created_at: new Date(),
    edited_at: null,
    streaming: args.streaming ?? false,
  };
  const message = rt.presenters.message(row);
  const event: AxidEvent = { type: 'message.created', to: channelScope(args.workspaceId, args.channelId), data: { message } };
  // The row is the event (messages.store.ts messageCreatedEvents), rendered by
  // the relay as this; a streamed reply's is written as posted (its appends are deltas).
  const eventJson = row.streaming ? JSON.stringify(event) : null;
  let inserted: boolean;
  // Level 3: links to preview (a streamed reply's are read when it is finished).
  const unfurl = row.streaming ? null : unfurlJob(rt, row.id, content);
  try {
    const also = unfurl
      ? async (trx: Knex.Transaction, m: MessageObject) => {
          await recordJob(rt, trx, 'message.unfurl', unfurl);
          await args.alsoInTransaction?.(trx, m);
        }
      : args.alsoInTransaction;
    inserted = also
      ? await rt.db.transaction(async (trx) => {
          const ok = await store.insertMessage(trx, row, eventJson, rt.presenters.searchWords);
          if (ok) await also(trx, message);
          return ok;
        })
      : await store.insertMessage(rt.db, row, eventJson, rt.presenters.searchWords);
  } catch (err) {
    // 23503: the root was deleted between the check and the insert.
    if ((err as { code?: string }).code === '23503' && threadId) throw badThread();
    throw err;
  }
  if (!inserted) throw badThread();
  rt.events.committed([event]);
  return message;
}

export async function createMessage(rt: Runtime, actor: Actor, channelId: string, kind: ChannelKind, body: PostMessageInput) {
  const { channel, isMember } = cachedReadable(actor, channelId, kind, rt.access) ?? (await requireReadable(rt.db, actor, channelId, kind, rt.access));
  if (!canParticipate(isMember)) throw joinFirst(kind);
  return postMessage(rt, {
    workspaceId: actor.workspaceId,
    channelId: channel.id,
    authorId: actor.userId,
    content: body.content,
    content_json: body.content_json,
    metadata: body.metadata ?? null,
    thread_id: body.thread_id ?? null,
    streaming: body.streaming ?? false,
  });
}

async function present(rt: Runtime, rows: MessageRow[]) {
  const reactions = await store.reactionsFor(
    rt.db,
    rows.map((r) => r.id),
  );
  return (row: MessageRow) => rt.presenters.message(row, reactions.get(row.id));
}

export async function listMessages(rt: Runtime, actor: Actor, channelId: string, kind: ChannelKind, q: ListMessagesInput) {
  const { channel } = await requireReadable(rt.db, actor, channelId, kind, rt.access);
  const from = pageFrom(q);
  const bothWays = rt.presenters.messageSql.bothWays;
  // Who may read is decided on the primary (and cached); the page may come from a replica.
  const page = await rt.reads.read(actor, async (db) => {
    if (q.thread_id && !(await store.isRootOf(db, channel.id, q.thread_id))) throw badThread();
    const list = { channelId: channel.id, threadId: q.thread_id, limit: q.limit };
    const before = 'before' in from ? from.before : undefined;
    if (!bothWays) return store.listMessages(db, rt.presenters.messageSql, { ...list, before });
    // The newest page has nothing newer: the level-2 statement serves it.
    if ('before' in from && before === undefined) {
      return { ...(await store.listMessages(db, rt.presenters.messageSql, list)), firstSeq: null, hasNewer: false };
    }
    const found = await store.listMessagesBothWays(db, bothWays, { ...list, from });
    if (!found) throw notFound('Message');
    return found;
  });
  return listJson(page);
}

/** Where the page starts; `around` takes neither cursor (level 3: the route table knows the fields only there). */
function pageFrom(q: ListMessagesInput): store.PageFrom {
  if (q.around !== undefined) {
    if (q.cursor !== undefined || q.after !== undefined) throw invalid('around: is not taken with cursor or after');
    return { around: q.around };
  }
  if (q.after !== undefined) {
    if (q.cursor !== undefined) throw invalid('after: is not taken with cursor');
    return { after: decodeCursor(q.after, 'after')! };
  }
  return { before: decodeCursor(q.cursor) };
}

async function requireMessage(rt: Runtime, channelId: string, messageId: string) {
  const row = isUuid(messageId) ? await store.findMessage(rt.db, channelId, messageId) : undefined;
  if (!row) throw notFound('Message');
  return row;
}

async function presentOne(rt: Runtime, row: MessageRow) {
  return (await present(rt, [row]))(row);
}

export async function getMessage(rt: Runtime, actor: Actor, channelId: string, kind: ChannelKind, messageId: string) {
  const { channel } = await requireReadable(rt.db, actor, channelId, kind, rt.access);
  return rt.reads.read(actor, async (db) => {
    const row = isUuid(messageId) ? await store.findMessage(db, channel.id, messageId) : undefined;
    if (!row) throw notFound('Message');
    const reactions = await store.reactionsFor(db, [row.id]);
    return rt.presenters.message(row, reactions.get(row.id));
  });
}

/**
 * The columns an edit or a finish sets from `metadata` and `content_json`
 * (validated, with what the document yields: card origin and mentions), as
 * an update patch; fields left out of the body are left as they are.
 */
async function documentPatch(rt: Runtime, actor: Actor, body: { metadata?: { type: string; data: Record<string, unknown> } | null; content_json?: unknown }): Promise<Record<string, unknown>> {
  const patch: Record<string, unknown> = {};
  await checkCarriedFile(rt, actor, body.metadata);
  if (body.metadata !== undefined) patch.metadata = body.metadata === null ? null : JSON.stringify(body.metadata);
  if (body.content_json !== undefined) {
    const blocks = checkContentJson(rt, body.content_json);
    patch.content_json = blocks.content_json === null ? null : JSON.stringify(blocks.content_json);
    patch.card_origin = blocks.card_origin;
    patch.mentioned_user_ids = rt.db.raw('?::uuid[]', [`{${blocks.mentioned_user_ids.join(',')}}`]);
  }
  return patch;
}

export async function updateMessage(rt: Runtime, actor: Actor, channelId: string, kind: ChannelKind, messageId: string, body: UpdateMessageInput) {
  const { channel } = await requireReadable(rt.db, actor, channelId, kind, rt.access);
  const existing = await requireMessage(rt, channel.id, messageId);
  if (!canEditMessage(actor, existing)) throw forbidden('only the author edits a message');
  // Content first, as before: of two bad fields, the content's refusal is the answer.
  const content = body.content !== undefined ? cleanContent(body.content) : undefined;
  const { unfurls: removeUnfurls, ...edit } = body;
  // Level 3: `unfurls: []` alone removes the previews and is no edit (no version, edited_at stays).
  if (removeUnfurls !== undefined && Object.keys(edit).length === 0) return removePreviews(rt, actor, channel.id, existing.id);
  const patch = await documentPatch(rt, actor, edit);
  if (content !== undefined) patch.content = content;
  if (removeUnfurls !== undefined) patch.unfurls = JSON.stringify([]);
  // New links: the previews of the old ones go, and the worker fetches the new ones.
  let unfurl: ReturnType<typeof unfurlJob> = null;
  if (content !== undefined && rt.presenters.unfurls && removeUnfurls === undefined && !sameLinks(unfurlLinks(rt, existing.content), unfurlLinks(rt, content))) {
    patch.unfurls = null;
    unfurl = unfurlJob(rt, existing.id, content);
  }
  return rt.db.transaction(async (trx) => {
    // Deleted meanwhile: nothing to edit.
    if (!(await store.keepVersion(trx, existing.id))) throw notFound('Message');
    await store.updateMessage(trx, existing.id, patch);
    if (unfurl) await recordJob(rt, trx, 'message.unfurl', unfurl);
    const row = (await store.findMessage(trx, channel.id, existing.id)) as MessageRow;
    const reactions = await store.reactionsFor(trx, [row.id]);
    const message = rt.presenters.message(row, reactions.get(row.id));
    await recordEvents(rt, trx, [{ type: 'message.updated', to: channelScope(actor.workspaceId, channel.id), data: { message } }]);
    return message;
  });
}

const sameLinks = (a: string[], b: string[]) => a.length === b.length && a.every((link, i) => link === b[i]);

/** `PATCH ... {unfurls: []}`: the author removes a message's link previews (message.updated). */
async function removePreviews(rt: Runtime, actor: Actor, channelId: string, messageId: string) {
  return rt.db.transaction(async (trx) => {
    const changed = await store.replaceContent(trx, messageId, { unfurls: JSON.stringify([]) });
    if (!changed) throw notFound('Message');
    const message = await presentLocked(rt, trx, channelId, messageId);
    await recordEvents(rt, trx, [{ type: 'message.updated', to: channelScope(actor.workspaceId, channelId), data: { message } }]);
    return message;
  });
}

/**
 * The worker's link previews (services/core/unfurls/unfurls.jobs.ts): written
 * if the message still has the content they were read from, with
 * message.updated, in the caller's transaction. Not an edit.
 */
export async function setUnfurls(rt: Runtime, trx: Knex.Transaction, messageId: string, content: string, unfurls: Unfurl[]): Promise<void> {
  const row = await store.setUnfurls(trx, messageId, content, JSON.stringify(unfurls));
  if (!row) return; // edited or deleted meanwhile
  const message = await presentLocked(rt, trx, row.channel_id, messageId);
  await recordEvents(rt, trx, [{ type: 'message.updated', to: channelScope(row.workspace_id, row.channel_id), data: { message } }]);
}

/** Edit history: the earlier versions of a message, newest first, to whoever can read it. */
export async function listEdits(rt: Runtime, actor: Actor, channelId: string, kind: ChannelKind, messageId: string, q: PageQuery) {
  const { channel } = await requireReadable(rt.db, actor, channelId, kind, rt.access);
  const message = await requireMessage(rt, channel.id, messageId);
  const rows = await store.listEdits(rt.db, message.id, { before: decodeCursor(q.cursor), limit: q.limit });
  return list(pageOf(rows, q.limit, presentMessageEdit));
}

export async function deleteMessage(rt: Runtime, actor: Actor, channelId: string, kind: ChannelKind, messageId: string) {
  const { channel } = await requireReadable(rt.db, actor, channelId, kind, rt.access);
  const existing = await requireMessage(rt, channel.id, messageId);
  if (!canDeleteMessage(actor, existing)) throw forbidden('only the author, an admin or an owner deletes a message');
  await rt.db.transaction(async (trx) => {
    // Level 3: files whose last carrier goes are removed with it (contract §17).
    // Locked first, so two deletes of their last two carriers cannot each see the other's.
    const carried = rt.presenters.filesFollowConversations && (existing.metadata?.type === FILE_METADATA_TYPE || !existing.thread_id)
      ? await filesStore.lockFiles(trx, actor.workspaceId, await store.filesCarriedBy(trx, existing.id))
      : [];
    // Deleting a root deletes its replies and its thread record (ON DELETE CASCADE).
    const deleted = await store.deleteMessage(trx, existing.id);
    if (deleted === 0) throw notFound('Message');
    if (existing.thread_id) await store.decrementThread(trx, existing.thread_id);
    for (const file of carried) if (!(await store.isFileCarried(trx, file.id))) await removeStoredFile(rt, trx, file);
    await recordEvents(rt, trx, [
      {
        type: 'message.deleted',
        to: channelScope(actor.workspaceId, channel.id),
        data: { message_id: existing.id, channel_id: channel.id, thread_id: existing.thread_id },
      },
    ]);
  });
}

function checkEmoji(emoji: string) {
  if (!isEmoji(emoji)) throw invalid('emoji: must be an emoji name (a-z, 0-9, _ + -, at most 64) or a Unicode emoji');
}

/** Adds a reaction; `created` is false (and nothing is emitted) when the user had already added it. */
export async function addReaction(rt: Runtime, actor: Actor, channelId: string, kind: ChannelKind, messageId: string, emoji: string) {
  const { channel, isMember } = await requireReadable(rt.db, actor, channelId, kind, rt.access);
  if (!canParticipate(isMember)) throw joinFirst(kind);
  const message = await requireMessage(rt, channel.id, messageId);
  checkEmoji(emoji);
  const key = { message_id: message.id, user_id: actor.userId, emoji };
  return rt.db.transaction(async (trx) => {
    const inserted = await store.insertReaction(trx, key).catch((err: { code?: string }) => {
      // 23503: the message was deleted meanwhile.
      throw err.code === '23503' ? notFound('Message') : err;
    });
    if (!inserted) return { created: false, reaction: presentReaction((await store.findReaction(trx, key))!) };
    await recordEvents(rt, trx, [
      {
        type: 'reaction.added',
        to: channelScope(actor.workspaceId, channel.id),
        data: { message_id: message.id, channel_id: channel.id, emoji, user_id: actor.userId },
      },
    ]);
    return { created: true, reaction: presentReaction(inserted) };
  });
}

export async function removeReaction(rt: Runtime, actor: Actor, channelId: string, kind: ChannelKind, messageId: string, emoji: string) {
  const { channel } = await requireReadable(rt.db, actor, channelId, kind, rt.access);
  const message = await requireMessage(rt, channel.id, messageId);
  checkEmoji(emoji);
  await rt.db.transaction(async (trx) => {
    if (!(await store.deleteReaction(trx, { message_id: message.id, user_id: actor.userId, emoji }))) throw notFound('Reaction');
    await recordEvents(rt, trx, [
      {
        type: 'reaction.removed',
        to: channelScope(actor.workspaceId, channel.id),
        data: { message_id: message.id, channel_id: channel.id, emoji, user_id: actor.userId },
      },
    ]);
  });
}

/** Typing: nothing stored, an ephemeral event to the channel's members. */
export async function sendTyping(rt: Runtime, actor: Actor, channelId: string, kind: ChannelKind) {
  const { channel, isMember } = await requireReadable(rt.db, actor, channelId, kind, rt.access);
  if (!canParticipate(isMember)) throw joinFirst(kind);
  await publishEphemeral(rt.redis, rt.bus, {
    type: 'typing',
    to: channelScope(actor.workspaceId, channel.id),
    data: { channel_id: channel.id, user_id: actor.userId },
  });
}

/**
 * Replaces a message's content and content_json for the system (the worker
 * rendering a compatible webhook post's attachments): the same content rules,
 * no author check, not marked edited; message.updated is recorded in the
 * caller's transaction. Undefined when the message is gone.
 */
export async function replaceMessageContent(
  rt: Runtime,
  trx: Knex.Transaction,
  messageId: string,
  o: { content: string; content_json: unknown },
): Promise<MessageObject | undefined> {
  const content = cleanContent(parseOrThrow(Content, o.content, 'content'));
  const blocks = checkContentJson(rt, o.content_json);
  const channelId = await store.replaceContent(trx, messageId, {
    content,
    content_json: blocks.content_json === null ? null : JSON.stringify(blocks.content_json),
    card_origin: blocks.card_origin,
    mentioned_user_ids: trx.raw('?::uuid[]', [`{${blocks.mentioned_user_ids.join(',')}}`]),
  });
  if (!channelId) return undefined;
  const row = (await store.findMessage(trx, channelId, messageId)) as MessageRow;
  const reactions = await store.reactionsFor(trx, [messageId]);
  const message = rt.presenters.message(row, reactions.get(messageId));
  await recordEvents(rt, trx, [{ type: 'message.updated', to: channelScope(row.workspace_id, channelId), data: { message } }]);
  return message;
}

/**
 * Level 3: the messages that carried a removed file show it as removed (their
 * metadata becomes `{type: "axid.file", data: {file_id, removed: true}}`; the
 * name goes with the file), each with message.updated, in the caller's
 * transaction. Not an edit: edited_at stays.
 */
export async function markFileRemoved(rt: Runtime, trx: Knex.Transaction, workspaceId: string, fileId: string): Promise<void> {
  const metadata = JSON.stringify({ type: FILE_METADATA_TYPE, data: { file_id: fileId, removed: true } });
  const changed = await store.replaceCarriedFile(trx, workspaceId, fileId, metadata);
  const events: AxidEvent[] = [];
  for (const m of changed) {
    events.push({ type: 'message.updated', to: channelScope(workspaceId, m.channel_id), data: { message: await presentLocked(rt, trx, m.channel_id, m.id) } });
  }
  await recordEvents(rt, trx, events);
}

// ---- streamed agent replies (level 3) ---------------------------------------

const finished = () => new AppError('conflict', 'the message is no longer streaming: it was finished');

/** Appending and finishing write to the conversation: its author must still be a member (one who left: 403, or 404 where it is hidden now). */
async function requireWritable(rt: Runtime, actor: Actor, channelId: string, kind: ChannelKind) {
  const { channel, isMember } = await requireReadable(rt.db, actor, channelId, kind, rt.access);
  if (!canParticipate(isMember)) throw joinFirst(kind);
  return channel;
}

/** The author's own streaming message, locked for the change; 404 hidden or gone, 403 someone else's, 409 finished. */
async function lockStreaming(rt: Runtime, trx: Knex.Transaction, actor: Actor, channelId: string, messageId: string) {
  const row = isUuid(messageId) ? await store.lockMessage(trx, channelId, messageId) : undefined;
  if (!row) throw notFound('Message');
  if (!canEditMessage(actor, row)) throw forbidden('only the author appends to or finishes a streamed message');
  if (!row.streaming) throw finished();
  return row;
}

/**
 * Appends to a streamed reply: the stored content grows and the channel gets
 * `message.appended` with the delta. What follows the settled part of the
 * content (`settledLength`: from where its last top-level block or list item
 * starts) is sanitized again with the delta, so an append costs the size of
 * that block and the delta, never the whole reply's; the search words are
 * written once, when the reply is finished (migration 110). In the rare case
 * that changes what was already sent (a link completed by the delta turns out
 * unsafe), the channel gets message.updated with the whole message instead,
 * so no client keeps text the service did not store.
 */
export async function appendToMessage(rt: Runtime, actor: Actor, channelId: string, kind: ChannelKind, messageId: string, body: AppendInput) {
  const channel = await requireWritable(rt, actor, channelId, kind);
  return rt.db.transaction(async (trx) => {
    const row = await lockStreaming(rt, trx, actor, channel.id, messageId);
    if (row.length + charCount(body.content) > MAX_CONTENT) throw invalid(`content: the message would be longer than ${MAX_CONTENT} characters`);
    // Settled and open parts are counted in characters, as the database counts them.
    let settled = row.stream_settled ?? 0;
    let open = row.open_content;
    if (row.stream_settled === null) {
      // Posted or edited content is sanitized already: where it settles is read, not sanitized again.
      const at = settledLength(open);
      settled = charCount(open.slice(0, at));
      open = open.slice(at);
    }
    const next = sanitizeAppend(open, body.content);
    checkStoredLength(settled + charCount(next.tail));
    const updated = await store.appendContent(trx, row.id, { keep: settled, tail: next.tail, settled: settled + charCount(next.tail.slice(0, next.settles)) });
    const to = channelScope(actor.workspaceId, channel.id);
    if (next.appended !== null) {
      const delta = { message_id: row.id, channel_id: channel.id, content_delta: next.appended };
      await recordEvents(rt, trx, [{ type: 'message.appended', to, data: delta }]);
    } else {
      await recordEvents(rt, trx, [{ type: 'message.updated', to, data: { message: await presentLocked(rt, trx, channel.id, updated) } }]);
    }
    return presentLocked(rt, trx, channel.id, updated);
  });
}

async function presentLocked(rt: Runtime, trx: Knex.Transaction, channelId: string, id: string) {
  const row = (await store.findMessage(trx, channelId, id)) as MessageRow;
  const reactions = await store.reactionsFor(trx, [id]);
  return rt.presenters.message(row, reactions.get(id));
}

/** Ends a streamed reply (its author; optionally its final content_json and metadata): message.updated with streaming false. */
export async function finishMessage(rt: Runtime, actor: Actor, channelId: string, kind: ChannelKind, messageId: string, body: FinishInput) {
  const channel = await requireWritable(rt, actor, channelId, kind);
  const patch = await documentPatch(rt, actor, body);
  return rt.db.transaction(async (trx) => {
    const row = await lockStreaming(rt, trx, actor, channel.id, messageId);
    await store.finishStreaming(trx, row.id, patch);
    const message = await presentLocked(rt, trx, channel.id, row.id);
    // Its links are previewed once it is whole.
    const unfurl = unfurlJob(rt, row.id, message.content);
    if (unfurl) await recordJob(rt, trx, 'message.unfurl', unfurl);
    await recordEvents(rt, trx, [{ type: 'message.updated', to: channelScope(actor.workspaceId, channel.id), data: { message } }]);
    return message;
  });
}

/**
 * The sweep (a repeatable job of the worker): replies left streaming for
 * STREAMING_TIMEOUT seconds since their last append are finished by the
 * service, as their author would, a batch at a time. Returns how many.
 */
export async function finishStaleStreams(rt: Runtime): Promise<number> {
  let total = 0;
  for (;;) {
    const done = await rt.db.transaction(async (trx) => {
      const rows = await store.claimStaleStreams(trx, rt.config.streamingTimeout, 100);
      const events: AxidEvent[] = [];
      for (const row of rows) {
        const message = await presentLocked(rt, trx, row.channel_id, row.id);
        events.push({ type: 'message.updated', to: channelScope(row.workspace_id, row.channel_id), data: { message } });
      }
      await recordEvents(rt, trx, events);
      return rows.length;
    });
    total += done;
    if (done < 100) return total;
  }
}
