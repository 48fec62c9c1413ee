import { z } from 'zod';
import { PageQuery } from '../../../../shared/http/envelope.js';
import type { RouteTable } from '../../../../shared/http/route.js';
import { listOf } from '../../../../shared/http/responses.js';
import { ReadBody } from '../../../core/read-state/read-state.schemas.js';
import { FOLLOWED_THREADS, FollowedThreadSchema } from '../../../core/threads/threads.schemas.js';
import * as threads from '../../../core/threads/threads.service.js';

const RootParams = z.object({ message_id: z.string() });

/** Followed threads (level 3): the Threads view's list and read marks. */
export function threadRoutes(routes: RouteTable) {
  const tag = 'Messages';
  routes
    .add(
      {
        method: 'get',
        path: '/threads',
        scope: 'read',
        summary: 'Threads the caller follows (started, replied to, or mentioned in) in conversations they are a member of, newest reply first, with unread replies',
        tag,
        ...FOLLOWED_THREADS,
        query: PageQuery,
        response: listOf(FollowedThreadSchema),
      },
      ({ rt, actor, query }) => threads.listFollowed(rt, actor, query),
    )
    .add(
      {
        method: 'post',
        path: '/threads/{message_id}/read',
        scope: 'messages:write',
        summary: 'Record that the caller has read a thread (by its root message id) up to one of its replies (it never moves back)',
        tag,
        ...FOLLOWED_THREADS,
        params: RootParams,
        body: ReadBody,
        errors: ['forbidden', 'not_found'],
      },
      async ({ rt, actor, params, body }) => {
        await threads.markRead(rt, actor, params.message_id, body.message_id);
      },
    );
}
