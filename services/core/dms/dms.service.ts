import { requireAnyConversation } from '../../../shared/scopes.js';
import type { Runtime } from '../../../shared/runtime.js';
import type { Actor } from '../../../shared/auth.js';
import type { Knex } from '../../../shared/db/knex.js';
import { invalid, notFound } from '../../../shared/errors.js';
import { recordEvents } from '../../../shared/events.js';
import { decodeCursor, pageOf, type PageQuery } from '../../../shared/http/envelope.js';
import { requireReadable } from '../channels/channels.access.js';
import { withReadState } from '../read-state/read-state.js';
import * as memberships from '../channels/channels.store.js';
import { presentConversation } from './dms.presenter.js';
import { MAX_OTHER_MEMBERS } from './dms.schemas.js';
import * as store from './dms.store.js';

export async function listConversations(rt: Runtime, actor: Actor, q: PageQuery) {
  const rows = await rt.reads.read(actor, (db) =>
    store.listConversations(db, {
      workspaceId: actor.workspaceId,
      userId: actor.userId,
      before: decodeCursor(q.cursor),
      limit: q.limit,
      conversationIds: actor.conversationIds,
    }),
  );
  const page = pageOf(rows, q.limit, presentConversation);
  return { ...page, items: await withReadState(rt, actor, page.items) };
}

export async function getConversation(rt: Runtime, actor: Actor, conversationId: string) {
  const { channel } = await requireReadable(rt.db, actor, conversationId, 'conversation');
  const [shown] = await withReadState(rt, actor, [presentConversation(channel)]);
  return shown!;
}

/**
 * Opens the conversation of the caller and 1 to 8 other users, or finds the one
 * the same set of people already has. The caller's own id in the list is
 * ignored. `created` says whether it is new (201) or existed (200).
 */
export async function openConversation(rt: Runtime, actor: Actor, userIds: string[]) {
  const db = rt.db;
  requireAnyConversation(actor, 'opening a conversation');
  const others = [...new Set(userIds.map((id) => id.toLowerCase()))].filter((id) => id !== actor.userId);
  if (others.length < 1 || others.length > MAX_OTHER_MEMBERS) {
    throw invalid(`user_ids: must list 1 to ${MAX_OTHER_MEMBERS} users other than yourself`);
  }
  if ((await store.countActiveUsers(db, actor.workspaceId, others)) !== others.length) throw notFound('User');
  const memberIds = [actor.userId, ...others].sort();
  const memberKey = memberIds.join(',');
  return db.transaction(async (trx) => {
    const created = await store.insertConversation(trx, {
      workspace_id: actor.workspaceId,
      kind: memberIds.length === 2 ? 'dm' : 'group_dm',
      member_key: memberKey,
      created_by: actor.userId,
    });
    if (!created) {
      // Another request (or an earlier one) opened it; ON CONFLICT waited for it to commit.
      const existing = await store.findConversationByKey(trx, actor.workspaceId, memberKey);
      return { created: false, conversation: presentConversation(existing!) };
    }
    await memberships.insertMembers(trx, created.id, actor.workspaceId, memberIds);
    const conversation = presentConversation(created);
    await recordEvents(rt, trx, [
      {
        type: 'dm.created',
        to: { scope: 'users', workspace_id: actor.workspaceId, user_ids: memberIds },
        data: { conversation: { id: conversation.id, kind: conversation.kind, member_ids: conversation.member_ids } },
      },
    ]);
    return { created: true, conversation };
  });
}
