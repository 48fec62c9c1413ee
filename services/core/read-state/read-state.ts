// Read state (feature level 3, contract §12 "Read state"): how far each member
// has read a channel or DM, and what is unread after it. Decided here alone:
// where the runtime's objects carry no read state (level 2, `rt.presenters`)
// `withReadState` returns them untouched (the wire stays byte for byte);
// where they do (level 3) it adds `last_read_message_id`, `unread_count` and
// `mention_count` for the caller, read in one query for a whole page.
import type { Actor } from '../../../shared/auth.js';
import { forbidden, notFound } from '../../../shared/errors.js';
import { recordEvents } from '../../../shared/events.js';
import type { Runtime } from '../../../shared/runtime.js';
import { requireReadable, type ChannelKind } from '../channels/channels.access.js';
import { COUNT_CAP } from './read-state.schemas.js';

interface ReadRow {
  channel_id: string;
  last_read_message_id: string | null;
  unread_count: number;
  mention_count: number;
}

/**
 * Unread after the mark (or, before any mark, since the caller joined):
 * top-level messages by others, each count bounded by COUNT_CAP. Channels the
 * caller is not in have no mark and count nothing.
 */
const READ_STATE_SQL = `
  SELECT cm.channel_id, cm.last_read_message_id,
    (SELECT count(*)::int FROM (
       SELECT 1 FROM messages m
        WHERE m.channel_id = cm.channel_id AND m.thread_id IS NULL AND m.seq > coalesce(cm.last_read_seq, 0)
          AND (cm.last_read_seq IS NOT NULL OR m.created_at > cm.created_at)
          AND m.author_id IS DISTINCT FROM cm.user_id
        LIMIT ${COUNT_CAP}) u) AS unread_count,
    (SELECT count(*)::int FROM (
       SELECT 1 FROM messages m
        WHERE m.channel_id = cm.channel_id AND m.thread_id IS NULL AND m.seq > coalesce(cm.last_read_seq, 0)
          AND (cm.last_read_seq IS NOT NULL OR m.created_at > cm.created_at)
          AND m.author_id IS DISTINCT FROM cm.user_id AND cm.user_id = ANY (m.mentioned_user_ids)
        LIMIT ${COUNT_CAP}) u) AS mention_count
  FROM channel_members cm
  WHERE cm.user_id = ? AND cm.channel_id = ANY (?::uuid[])`;

/** Channel or DM objects as the caller reads them: with their read state where the runtime's objects carry it, else untouched. */
export async function withReadState<T extends { id: string }>(rt: Runtime, actor: Actor, objects: T[]): Promise<T[]> {
  if (!rt.presenters.readState || objects.length === 0) return objects;
  const { rows } = await rt.db.raw<{ rows: ReadRow[] }>(READ_STATE_SQL, [actor.userId, objects.map((o) => o.id)]);
  const byChannel = new Map(rows.map((r) => [r.channel_id, r]));
  return objects.map((o) => {
    const r = byChannel.get(o.id);
    return { ...o, last_read_message_id: r?.last_read_message_id ?? null, unread_count: r?.unread_count ?? 0, mention_count: r?.mention_count ?? 0 };
  });
}

/**
 * `POST /channels/{id}/read` and `/dms/{id}/read`: the caller has read up to
 * `messageId`. The mark never moves back; when it moves, `channel.read` goes
 * to the caller's own streams (other tabs and devices follow).
 */
export async function markRead(rt: Runtime, actor: Actor, channelId: string, messageId: string, kind: ChannelKind) {
  const { channel, isMember } = await requireReadable(rt.db, actor, channelId, kind);
  if (!isMember) throw forbidden('only members have a read state: join the channel first');
  const message = await rt.db('messages').where({ id: messageId, channel_id: channel.id }).first('id', 'seq');
  if (!message) throw notFound('Message');
  await rt.db.transaction(async (trx) => {
    const moved = await trx('channel_members')
      .where({ channel_id: channel.id, user_id: actor.userId })
      .andWhere((q) => q.whereNull('last_read_seq').orWhere('last_read_seq', '<', message.seq))
      .update({ last_read_seq: message.seq, last_read_message_id: message.id });
    if (moved) {
      await recordEvents(rt, trx, [
        { type: 'channel.read', to: { scope: 'users', workspace_id: actor.workspaceId, user_ids: [actor.userId] }, data: { channel_id: channel.id, last_read_message_id: message.id } },
      ]);
    }
  });
}
