// Followed threads (level 3; docs/team-chat.md, "Followed threads"): the
// threads a person started, replied to or was mentioned in, in the
// conversations they are a member of, with the replies they have not read.
import type { Actor } from '../../../shared/auth.js';
import { forbidden, notFound } from '../../../shared/errors.js';
import { decodeCursor, listJson, type PageQuery } from '../../../shared/http/envelope.js';
import { isUuid } from '../../../shared/ids.js';
import type { Runtime } from '../../../shared/runtime.js';
import { requireReadable } from '../channels/channels.access.js';
import * as store from './threads.store.js';

export async function listFollowed(rt: Runtime, actor: Actor, q: PageQuery) {
  const page = await rt.reads.read(actor, (db) =>
    store.listFollowed(db, rt.presenters.messageSql.json, {
      workspaceId: actor.workspaceId,
      userId: actor.userId,
      before: decodeCursor(q.cursor),
      limit: q.limit,
      conversationIds: actor.conversationIds ?? null,
    }),
  );
  return listJson(page);
}

/**
 * `POST /threads/{root_id}/read`: the caller has read the thread up to
 * `messageId` (one of its replies). The mark never moves back. Members only,
 * as for a conversation's own mark.
 */
export async function markRead(rt: Runtime, actor: Actor, rootId: string, messageId: string): Promise<void> {
  if (!isUuid(rootId)) throw notFound('Thread');
  const root = await rt.db('messages as m')
    .join('channels as c', 'c.id', 'm.channel_id')
    .where({ 'm.id': rootId, 'm.workspace_id': actor.workspaceId })
    .whereNull('m.thread_id')
    .first('m.id', 'm.channel_id', 'c.kind');
  if (!root) throw notFound('Thread');
  const { isMember } = await requireReadable(rt.db, actor, root.channel_id, root.kind === 'channel' ? 'channel' : 'conversation', rt.access).catch(() => {
    throw notFound('Thread');
  });
  if (!isMember) throw forbidden('only members have a read state: join the conversation first');
  const reply = await rt.db('messages').where({ id: messageId, thread_id: root.id }).first('id', 'seq');
  if (!reply) throw notFound('Message');
  await store.markRead(rt.db, { userId: actor.userId, rootId: root.id, seq: Number(reply.seq), messageId: reply.id });
}
