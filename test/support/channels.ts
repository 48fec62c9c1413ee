// Channel, DM and message changes for stream tests, written the way the
// services write them: the rows and their events in one transaction.
// Written through knex rather than HTTP so that stream tests control exactly
// which rows and events exist (and in which order) without other side effects.
import { randomUUID } from 'node:crypto';
import { recordEvents, type AxidEvent } from '../../shared/events.js';
import { stack, uniqueName } from './stack.js';
import type { Stack } from '../../services/stack.js';

const rt = (s?: Stack) => (s ?? stack()).rt;
const db = (s?: Stack) => rt(s).db;

export interface ChannelRef {
  id: string;
  workspaceId: string;
  isPrivate: boolean;
}

export async function createChannel(
  workspaceId: string,
  creatorId: string,
  o: { isPrivate?: boolean; members?: string[]; s?: Stack } = {},
): Promise<ChannelRef> {
  return db(o.s).transaction(async (trx) => {
    const isPrivate = o.isPrivate ?? false;
    const [row] = await trx('channels')
      .insert({ workspace_id: workspaceId, name: uniqueName('chan'), is_private: isPrivate, created_by: creatorId })
      .returning(['id', 'name', 'created_by', 'is_private']);
    const members = [creatorId, ...(o.members ?? []).filter((m) => m !== creatorId)];
    await trx('channel_members').insert(members.map((user_id) => ({ channel_id: row.id, user_id, workspace_id: workspaceId })));
    const channel = { id: row.id, name: row.name, is_private: isPrivate, created_by: creatorId };
    const events: AxidEvent[] = [
      {
        type: 'channel.created',
        to: isPrivate ? { scope: 'channel', workspace_id: workspaceId, channel_id: row.id } : { scope: 'workspace', workspace_id: workspaceId },
        data: { channel },
      },
      ...members.slice(1).map((user_id) => memberEvent('channel.member_added', workspaceId, row.id, user_id)),
    ];
    await recordEvents(rt(o.s), trx, events);
    return { id: row.id, workspaceId, isPrivate };
  });
}

const memberEvent = (type: 'channel.member_added' | 'channel.member_removed', workspaceId: string, channelId: string, userId: string): AxidEvent => ({
  type,
  to: { scope: 'channel', workspace_id: workspaceId, channel_id: channelId, user_ids: [userId] },
  data: { channel_id: channelId, user_id: userId },
});

export async function addMember(channel: ChannelRef, userId: string, s?: Stack) {
  await db(s).transaction(async (trx) => {
    await trx('channel_members').insert({ channel_id: channel.id, user_id: userId, workspace_id: channel.workspaceId });
    await recordEvents(rt(s), trx, [memberEvent('channel.member_added', channel.workspaceId, channel.id, userId)]);
  });
}

export async function removeMember(channel: ChannelRef, userId: string, s?: Stack) {
  await db(s).transaction(async (trx) => {
    await trx('channel_members').where({ channel_id: channel.id, user_id: userId }).delete();
    await recordEvents(rt(s), trx, [memberEvent('channel.member_removed', channel.workspaceId, channel.id, userId)]);
  });
}

export async function createDm(workspaceId: string, memberIds: string[], s?: Stack): Promise<ChannelRef> {
  return db(s).transaction(async (trx) => {
    const sorted = [...memberIds].sort();
    const [row] = await trx('channels')
      .insert({ workspace_id: workspaceId, kind: sorted.length > 2 ? 'group_dm' : 'dm', member_key: sorted.join(','), created_by: sorted[0] })
      .returning(['id', 'kind']);
    await trx('channel_members').insert(sorted.map((user_id) => ({ channel_id: row.id, user_id, workspace_id: workspaceId })));
    await recordEvents(rt(s), trx, [
      {
        type: 'dm.created',
        to: { scope: 'users', workspace_id: workspaceId, user_ids: sorted },
        data: { conversation: { id: row.id, kind: row.kind, member_ids: sorted } },
      },
    ]);
    return { id: row.id, workspaceId, isPrivate: true };
  });
}

export async function postMessage(channel: ChannelRef, authorId: string, content: string, s?: Stack) {
  return db(s).transaction(async (trx) => {
    const [row] = await trx('messages')
      .insert({ workspace_id: channel.workspaceId, channel_id: channel.id, author_id: authorId, content })
      .returning(['id', 'channel_id', 'content', 'created_at']);
    const message = { id: row.id, channel_id: row.channel_id, user_id: authorId, content: row.content, created_at: row.created_at };
    await recordEvents(rt(s), trx, [
      { type: 'message.created', to: { scope: 'channel', workspace_id: channel.workspaceId, channel_id: channel.id }, data: { message } },
    ]);
    return message;
  });
}

/**
 * A workspace-wide marker event. Events arrive in stream order, so once a
 * client has the fence, anything recorded before it that it should get has
 * arrived too, and anything it should not get would have.
 */
export async function fence(workspaceId: string, s?: Stack): Promise<string> {
  const token = randomUUID();
  await db(s).transaction((trx) =>
    recordEvents(rt(s), trx, [{ type: 'user.updated', to: { scope: 'workspace', workspace_id: workspaceId }, data: { user: { id: token }, fence: token } }]),
  );
  return token;
}
