import type { RouteTable } from '../../../../shared/http/route.js';
import { listOf } from '../../../../shared/http/responses.js';
import { MessageSchema } from '../../../core/messages/messages.presenter.js';
import { SEARCH, SearchQuery } from '../../../core/search/search.schemas.js';
import * as search from '../../../core/search/search.service.js';

export function searchRoutes(routes: RouteTable) {
  routes.add(
    {
      method: 'get',
      path: '/search/messages',
      scope: 'read',
      summary: 'Search messages the caller can read now: q in web-search syntax (words, "phrases", -excluded) and/or filters (channel, author, time, has a file), newest first',
      ...SEARCH,
      tag: 'Messages',
      query: SearchQuery,
      response: listOf(MessageSchema),
    },
    ({ rt, actor, query }) => search.searchMessages(rt, actor, query),
  );
}
