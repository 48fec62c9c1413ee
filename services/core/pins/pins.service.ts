// Pins (level 3, contract §14): any member pins a message of the conversation
// (top-level or a reply), at most MAX_PINS per conversation; whoever can read
// the conversation lists them, newest pin first. Channels and DM conversations
// share this code, like messages: the kind makes requireReadable hide the other.
import type { Actor } from '../../../shared/auth.js';
import { AppError, forbidden, notFound } from '../../../shared/errors.js';
import { recordEvents, type AxidEvent } from '../../../shared/events.js';
import { decodeCursor, listJson, type PageQuery } from '../../../shared/http/envelope.js';
import { isUuid } from '../../../shared/ids.js';
import type { Runtime } from '../../../shared/runtime.js';
import { refuseArchived, requireReadable, type ChannelKind } from '../channels/channels.access.js';
import { canParticipate } from '../messages/messages.policy.js';
import type { MessageObject, MessageRow } from '../messages/messages.presenter.js';
import { findMessage, reactionsFor } from '../messages/messages.store.js';
import { lockChannel } from '../channels/channels.store.js';
import * as store from './pins.store.js';

const channelScope = (workspaceId: string, channelId: string): AxidEvent['to'] => ({ scope: 'channel', workspace_id: workspaceId, channel_id: channelId });

const membersOnly = (kind: ChannelKind) =>
  forbidden(kind === 'channel' ? 'only members of the channel pin and unpin messages: join it first' : 'you are not a member of this conversation');

/** The conversation, if the caller may change its pins: a member, and (a channel) not archived. */
async function requirePinnable(rt: Runtime, actor: Actor, channelId: string, kind: ChannelKind) {
  const { channel, isMember } = await requireReadable(rt.db, actor, channelId, kind, rt.access);
  if (!canParticipate(isMember)) throw membersOnly(kind);
  refuseArchived(channel);
  return channel;
}

async function presentRow(rt: Runtime, db: Parameters<typeof findMessage>[0], channelId: string, messageId: string): Promise<MessageObject> {
  const row = (await findMessage(db, channelId, messageId)) as MessageRow;
  const reactions = await reactionsFor(db, [messageId]);
  return rt.presenters.message(row, reactions.get(messageId));
}

/**
 * Pins a message: `created` false (nothing changes, no event) when it was
 * pinned already. 409 conflict at MAX_PINS: the conversation's row is locked
 * first, so concurrent pins are counted one after the other.
 */
export async function pinMessage(rt: Runtime, actor: Actor, channelId: string, kind: ChannelKind, messageId: string): Promise<{ created: boolean; message: MessageObject }> {
  const channel = await requirePinnable(rt, actor, channelId, kind);
  if (!isUuid(messageId)) throw notFound('Message');
  return rt.db.transaction(async (trx) => {
    const locked = await lockChannel(trx, channel.id);
    if (!locked) throw notFound(kind === 'channel' ? 'Channel' : 'Conversation');
    // The conversation's row, locked until the end: concurrent pins are counted
    // one after the other, and one archived meanwhile is seen.
    refuseArchived(locked);
    const existing = await findMessage(trx, channel.id, messageId);
    if (!existing) throw notFound('Message');
    if (existing.pinned_at) return { created: false, message: await presentRow(rt, trx, channel.id, messageId) };
    if ((await store.countPins(trx, channel.id)) >= store.MAX_PINS) {
      throw new AppError('conflict', `this conversation has ${store.MAX_PINS} pinned messages, the most it may have: unpin one first`);
    }
    await store.pin(trx, channel.id, messageId, actor.userId);
    const message = await presentRow(rt, trx, channel.id, messageId);
    await recordEvents(rt, trx, [
      { type: 'message.pinned', to: channelScope(actor.workspaceId, channel.id), data: { message_id: messageId, channel_id: channel.id, user_id: actor.userId, message } },
    ]);
    return { created: true, message };
  });
}

/** Unpins a message (any member); 404 when it is not pinned. */
export async function unpinMessage(rt: Runtime, actor: Actor, channelId: string, kind: ChannelKind, messageId: string): Promise<void> {
  const channel = await requirePinnable(rt, actor, channelId, kind);
  if (!isUuid(messageId)) throw notFound('Pin');
  await rt.db.transaction(async (trx) => {
    const locked = await lockChannel(trx, channel.id);
    if (!locked) throw notFound(kind === 'channel' ? 'Channel' : 'Conversation');
    refuseArchived(locked);
    if (!(await store.unpin(trx, channel.id, messageId))) throw notFound('Pin');
    await recordEvents(rt, trx, [
      { type: 'message.unpinned', to: channelScope(actor.workspaceId, channel.id), data: { message_id: messageId, channel_id: channel.id, user_id: actor.userId } },
    ]);
  });
}

/** The pinned messages, newest pin first, to whoever can read the conversation. */
export async function listPins(rt: Runtime, actor: Actor, channelId: string, kind: ChannelKind, q: PageQuery) {
  const { channel } = await requireReadable(rt.db, actor, channelId, kind, rt.access);
  const rows = await rt.reads.read(actor, (db) => store.listPins(db, rt.presenters.messageSql.json, { channelId: channel.id, beforeMicros: decodeCursor(q.cursor), limit: q.limit }));
  const page = rows.slice(0, q.limit);
  return listJson({ data: `[${page.map((r) => r.message).join(',')}]`, lastSeq: page.at(-1)?.micros ?? null, hasMore: rows.length > q.limit });
}
