// Search (level 3, contract §9): what the caller can read at the moment of
// the search, newest first, keyset pages (docs/decisions.md, "Search").
import type { Actor } from '../../../shared/auth.js';
import { decodeCursor, listJson } from '../../../shared/http/envelope.js';
import type { Runtime } from '../../../shared/runtime.js';
import type { SearchInput } from './search.schemas.js';
import * as store from './search.store.js';

export async function searchMessages(rt: Runtime, actor: Actor, q: SearchInput) {
  const page = await store.searchMessages(rt.db, rt.presenters.messageSql, {
    workspaceId: actor.workspaceId,
    userId: actor.userId,
    q: q.q ?? '',
    channelId: q.channel_id,
    authorId: q.author_id,
    postedBefore: q.before,
    postedAfter: q.after,
    hasFile: q.has === 'file',
    before: decodeCursor(q.cursor),
    limit: q.limit,
    conversationIds: actor.conversationIds,
  });
  return listJson(page);
}
