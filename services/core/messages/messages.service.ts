// Messages, threads, reactions and typing. Channels and DM conversations share
// this code: the routes pass which kind the path names, and requireReadable
// hides everything else.
import { randomUUID } from 'node:crypto';
import type { Actor } from '../../../shared/auth.js';
import type { Knex } from '../../../shared/db/knex.js';
import { validateContentJson } from '../../../shared/blocks/index.js';
import { AppError, forbidden, invalid, notFound } from '../../../shared/errors.js';
import { publishEphemeral, recordEvents, type AxidEvent } from '../../../shared/events.js';
import { decodeCursor, JsonText, list, listJson, pageOf, type PageQuery } from '../../../shared/http/envelope.js';
import { parseOrThrow } from '../../../shared/validation.js';
import { isUuid } from '../../../shared/ids.js';
import type { Runtime } from '../../../shared/runtime.js';
import { cachedReadable, refuseArchived, requireReadable, type ChannelKind } from '../channels/channels.access.js';
import { canDeleteMessage, canEditMessage, canParticipate } from './messages.policy.js';
import { presentMessageEdit, presentReaction, type ContentDocument, type MessageDisplay, type MessageObject, type MessageRow } from './messages.presenter.js';
import { sanitizeAppend, sanitizeContent, settledLength } from './messages.sanitize.js';
import { clearStatusAfterPost } from '../agents/agents.status.js';
import { Content, MAX_CONTENT, Metadata, isEmoji, type AppendInput, type FinishInput, type ListMessagesInput, type PostMessageInput, type UpdateMessageInput } from './messages.schemas.js';
import { charCount } from '../channels/channels.schemas.js';
import * as store from './messages.store.js';
import { readableFile } from '../files/files.access.js';
import { FILE_METADATA_TYPE } from '../files/files.presenter.js';
import { removeStoredFile } from '../files/files.removal.js';
import * as filesStore from '../files/files.store.js';
import { resolveMentions, textMentions } from '../user-groups/user-groups.mentions.js';
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
  const result = validateContentJson(doc, { trackerHosts: rt.config.trackerHosts, codeHosts: rt.config.codeHosts, agentBlocks: rt.presenters.agentsAtHome });
  if (!result.valid) {
    const where = result.path ? `content_json.${result.path}` : 'content_json';
    const reason = result.message.slice((result.path || 'document').length).replace(/^:\s*/, '');
    throw new AppError('validation_error', `${where}: ${reason}`);
  }
  // Admitted by the validator (which serialises its URLs), so it has the shape the presenter declares.
  return { content_json: result.document as ContentDocument, card_origin: result.card_origin, mentioned_user_ids: [...new Set(result.mentioned_user_ids)] };
}

interface Mentions {
  userIds: string[];
  groupIds: string[];
}

/**
 * Who a message mentions, the one place it is decided: content_json's mention
 * nodes and, where the level has them (contract §14), the `@name`, `@here`,
 * `@channel` and `@<group>` its content writes (user-groups.mentions.ts). A
 * group reaches its members who can read the conversation; `@here` and
 * `@channel` reach members, so the people are in mentioned_user_ids and count
 * in mention_count. Content without `@` asks nothing.
 */
async function mentionsOf(
  rt: Runtime,
  db: Knex,
  o: { workspaceId: string; channelId: string; content: string; nodeUserIds: string[] },
): Promise<Mentions> {
  const written = rt.presenters.textMentions ? textMentions(o.content) : null;
  if (!written) return { userIds: o.nodeUserIds, groupIds: [] };
  const reached = await resolveMentions(rt, db, { workspaceId: o.workspaceId, channelId: o.channelId, names: written.names });
  return { userIds: [...new Set([...o.nodeUserIds, ...reached.userIds])], groupIds: reached.groupIds };
}

const uuidArray = (db: Knex, ids: string[]) => db.raw('?::uuid[]', [`{${ids.join(',')}}`]);
const textArray = (db: Knex, values: string[]) => db.raw('?::text[]', [values]);

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
  /** An agent's post: under the loop guard, and it clears the agent's working status in its thread (level 3). */
  authorIsAgent?: boolean;
  /** Writes that commit with the message or not at all (a compat hook's pending render and its job; a scheduled message's or reminder's move to `sent`). */
  alsoInTransaction?: (trx: Knex.Transaction, message: MessageObject) => Promise<void>;
}

/**
 * Every content rule of a post (limits, sanitizing, block validation, a
 * carried file, thread_id's form) without writing anything: postMessage runs
 * it, and so does scheduling a message, so a scheduled one is refused when it
 * is written, not when it is due.
 */
export async function prepareMessage(rt: Runtime, args: Pick<PostMessageArgs, 'workspaceId' | 'authorId' | 'content' | 'content_json' | 'metadata' | 'thread_id'>) {
  const content = cleanContent(parseOrThrow(Content, args.content, 'content'));
  const metadata = args.metadata == null ? null : parseOrThrow(Metadata, args.metadata, 'metadata');
  await checkCarriedFile(rt, { userId: args.authorId, workspaceId: args.workspaceId }, metadata);
  const threadId = args.thread_id ?? null;
  if (threadId !== null && !isUuid(threadId)) throw badThread();
  const blocks = checkContentJson(rt, args.content_json);
  return { content, metadata, threadId, blocks };
}

/**
 * Posts a message for an author the caller has already authorised (the HTTP
 * handler checks membership; incoming webhooks own their channel). Applies every
 * content rule (limits, sanitizing, block validation, thread_id), writes the
 * message, its thread count and its `message.created` event in one statement,
 * and returns the Message object.
 */
export async function postMessage(rt: Runtime, args: PostMessageArgs): Promise<MessageObject> {
  const row = await messageRowOf(rt, args);
  const threadId = row.thread_id;
  const message = rt.presenters.message(row);
  const event: AxidEvent = { type: 'message.created', to: channelScope(args.workspaceId, args.channelId), data: { message } };
  // The row is the event (messages.store.ts messageCreatedEvents), rendered by
  // the relay as this; a streamed reply's is written as posted (its appends are deltas).
  const eventJson = row.streaming ? JSON.stringify(event) : null;
  const agent = args.authorIsAgent === true && rt.presenters.agentsAtHome;
  const chainLimit = agent ? rt.config.agentChainLimit : null;
  let outcome: Awaited<ReturnType<typeof store.insertPost>>;
  try {
    // A message mentioning a group writes its ids beside the insert (messages.mentioned_group_ids), in one transaction.
    // Level 3: a message with links to preview records the worker's job with it (a streamed reply's are read when it is finished).
    const groupIds = row.mentioned_group_ids ?? [];
    const unfurl = row.streaming ? null : unfurlJob(rt, row.id, row.content);
    const also: PostMessageArgs['alsoInTransaction'] =
      groupIds.length === 0 && !unfurl
        ? args.alsoInTransaction
        : async (trx, posted) => {
            if (groupIds.length > 0) await store.setMentionedGroups(trx, row.id, groupIds);
            if (unfurl) await recordJob(rt, trx, 'message.unfurl', unfurl);
            await args.alsoInTransaction?.(trx, posted);
          };
    outcome = also
      ? await rt.db.transaction(async (trx) => {
          const result = await store.insertPost(trx, row, eventJson, rt.presenters.searchWords, chainLimit);
          if (result === 'inserted') await also(trx, message);
          return result;
        })
      : await store.insertPost(rt.db, row, eventJson, rt.presenters.searchWords, chainLimit);
  } catch (err) {
    // 23503: the root was deleted between the check and the insert.
    if ((err as { code?: string }).code === '23503' && threadId) throw badThread();
    throw err;
  }
  if (outcome === 'chain_limit') throw chainLimitReached(rt.config.agentChainLimit, threadId !== null);
  if (outcome === 'bad_thread') throw badThread();
  rt.events.committed([event]);
  if (agent && args.authorId) {
    clearStatusAfterPost(rt, { workspaceId: args.workspaceId, conversationId: args.channelId, threadId, userId: args.authorId });
  }
  return message;
}

const chainLimitReached = (limit: number, inThread: boolean) =>
  new AppError(
    'agent_chain_limit',
    `${limit} agent messages in a row ${inThread ? 'in this thread' : 'in this conversation'} (AGENT_CHAIN_LIMIT) with no person's message between: wait for a person to answer`,
  );

/**
 * A message's row as a post would write it, every content rule applied
 * (limits, sanitizing, block validation, thread_id's form): what postMessage
 * inserts, and what an ephemeral message (level 3) is rendered from unsaved.
 */
export async function messageRowOf(rt: Runtime, args: PostMessageArgs): Promise<MessageRow> {
  const { content, metadata, threadId, blocks } = await prepareMessage(rt, args);
  const mentions = await mentionsOf(rt, rt.db, {
    workspaceId: args.workspaceId,
    channelId: args.channelId,
    content,
    nodeUserIds: blocks.mentioned_user_ids,
  });
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
    mentioned_user_ids: mentions.userIds,
    mentioned_group_ids: mentions.groupIds,
    display: args.display ?? null,
    webhook_id: args.webhookId ?? null,
    created_at: new Date(),
    edited_at: null,
    streaming: args.streaming ?? false,
  };
  return row;
}

export async function createMessage(rt: Runtime, actor: Actor, channelId: string, kind: ChannelKind, body: PostMessageInput) {
  const { channel, isMember } = cachedReadable(actor, channelId, kind, rt.access) ?? (await requireReadable(rt.db, actor, channelId, kind, rt.access));
  if (!canParticipate(isMember)) throw joinFirst(kind);
  refuseArchived(channel);
  return postMessage(rt, {
    workspaceId: actor.workspaceId,
    channelId: channel.id,
    authorId: actor.userId,
    content: body.content,
    content_json: body.content_json,
    metadata: body.metadata ?? null,
    thread_id: body.thread_id ?? null,
    streaming: body.streaming ?? false,
    authorIsAgent: actor.isAgent,
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
  const list = { channelId: channel.id, threadId: q.thread_id, limit: q.limit };
  // The newest page (a channel switch) is usually kept (page-cache.ts): the same for every reader, dropped by any change.
  const pageKey = 'before' in from && from.before === undefined ? { channelId: channel.id, threadId: q.thread_id ?? null, limit: q.limit } : null;
  const kept = pageKey ? await rt.pages.get(pageKey) : null;
  if (kept instanceof JsonText) return kept;
  // Who may read is decided on the primary (and cached); the page may come from a replica.
  return rt.reads.read(actor, async (db) => {
    if (q.thread_id && !(await store.isRootOf(db, channel.id, q.thread_id))) throw badThread();
    if (pageKey) {
      const read = await store.listMessages(db, rt.presenters.messageSql, list);
      // The newest page has nothing newer: at level 3 the level-2 statement serves it.
      const answer = listJson(bothWays ? { ...read, firstSeq: null, hasNewer: false } : read);
      // Kept only from the primary: a replica may lag behind a change whose pages were already dropped.
      return kept && db === rt.db ? rt.pages.fill(pageKey, kept, answer) : answer;
    }
    const before = 'before' in from ? from.before : undefined;
    if (!bothWays) return listJson(await store.listMessages(db, rt.presenters.messageSql, { ...list, before }));
    const found = await store.listMessagesBothWays(db, bothWays, { ...list, from });
    if (!found) throw notFound('Message');
    return listJson(found);
  });
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
  refuseArchived(channel);
  // Content first, as before: of two bad fields, the content's refusal is the answer.
  const content = body.content !== undefined ? cleanContent(body.content) : undefined;
  const { unfurls: removeUnfurls, ...edit } = body;
  // Level 3: `unfurls: []` alone removes the previews and is no edit (no version, edited_at stays).
  if (removeUnfurls !== undefined && Object.keys(edit).length === 0) return removePreviews(rt, actor, channel.id, existing.id);
  const patch = await documentPatch(rt, actor, edit);
  if (content !== undefined) patch.content = content;
  if (rt.presenters.textMentions && (content !== undefined || body.content_json !== undefined)) {
    // What the edited message mentions, from its content and document as they will be.
    const doc = body.content_json !== undefined ? body.content_json : existing.content_json;
    const mentions = await mentionsOf(rt, rt.db, {
      workspaceId: actor.workspaceId,
      channelId: channel.id,
      content: content ?? existing.content,
      nodeUserIds: checkContentJson(rt, doc).mentioned_user_ids,
    });
    patch.mentioned_user_ids = uuidArray(rt.db, mentions.userIds);
    patch.mentioned_group_ids = textArray(rt.db, mentions.groupIds);
  }
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
  refuseArchived(channel);
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
  refuseArchived(channel);
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
  refuseArchived(channel);
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
  refuseArchived(channel);
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
  let row = (await store.findMessage(trx, channelId, messageId)) as MessageRow;
  const mentions = await mentionsOf(rt, trx, { workspaceId: row.workspace_id, channelId, content, nodeUserIds: blocks.mentioned_user_ids });
  if (mentions.userIds.length > blocks.mentioned_user_ids.length || mentions.groupIds.length > 0) {
    await store.replaceContent(trx, messageId, { mentioned_user_ids: uuidArray(trx, mentions.userIds), mentioned_group_ids: textArray(trx, mentions.groupIds) });
    row = (await store.findMessage(trx, channelId, messageId)) as MessageRow;
  }
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
  refuseArchived(channel);
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
    await settleStreamedMentions(rt, trx, channel.id, row.id);
    const message = await presentLocked(rt, trx, channel.id, row.id);
    // Its links are previewed once it is whole.
    const unfurl = unfurlJob(rt, row.id, message.content);
    if (unfurl) await recordJob(rt, trx, 'message.unfurl', unfurl);
    await recordEvents(rt, trx, [{ type: 'message.updated', to: channelScope(actor.workspaceId, channel.id), data: { message } }]);
    return message;
  });
}

/**
 * Level 3: who a finished streamed reply mentions, read once from its whole
 * content (an append does not scan: a name can be split across deltas), in
 * the caller's transaction.
 */
async function settleStreamedMentions(rt: Runtime, trx: Knex.Transaction, channelId: string, id: string): Promise<void> {
  if (!rt.presenters.textMentions) return;
  const row = (await store.findMessage(trx, channelId, id)) as MessageRow;
  const nodeUserIds = checkContentJson(rt, row.content_json).mentioned_user_ids;
  const mentions = await mentionsOf(rt, trx, { workspaceId: row.workspace_id, channelId, content: row.content, nodeUserIds });
  await store.replaceContent(trx, id, { mentioned_user_ids: uuidArray(trx, mentions.userIds), mentioned_group_ids: textArray(trx, mentions.groupIds) });
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
        await settleStreamedMentions(rt, trx, row.channel_id, row.id);
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
