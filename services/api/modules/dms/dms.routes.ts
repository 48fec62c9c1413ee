import { list, ok } from '../../../../shared/http/envelope.js';
import { Reply, type RouteTable } from '../../../../shared/http/route.js';
import { dataOf, listOf } from '../../../../shared/http/responses.js';
import { ConversationSchema } from '../../../core/dms/dms.presenter.js';
import { messageRoutes } from '../messages/messages.routes.js';
import { pinRoutes } from '../pins/pins.routes.js';
import { ConversationParams, ListQuery, OpenConversationBody } from '../../../core/dms/dms.schemas.js';
import * as dms from '../../../core/dms/dms.service.js';
import { markRead } from '../../../core/read-state/read-state.js';
import { ReadBody } from '../../../core/read-state/read-state.schemas.js';

export function dmRoutes(routes: RouteTable) {
  const tag = 'Direct messages';
  routes
    .add({ method: 'get', path: '/dms', scope: 'read', summary: "List the caller's conversations, newest first", tag, query: ListQuery, response: listOf(ConversationSchema) }, async ({ rt, actor, query }) =>
      list(await dms.listConversations(rt, actor, query)),
    )
    .add(
      {
        method: 'post',
        path: '/dms',
        scope: 'channels:write',
        summary: 'Open (201) or get (200) the conversation with 1 to 8 other users',
        tag,
        idempotent: 'actor',
        body: OpenConversationBody,
        status: 201,
        alsoStatus: [200],
        response: dataOf(ConversationSchema),
        errors: ['not_found'],
      },
      async ({ rt, actor, body }) => {
        const { created, conversation } = await dms.openConversation(rt, actor, body.user_ids);
        return new Reply(created ? 201 : 200, ok(conversation));
      },
    )
    .add({ method: 'get', path: '/dms/{conversation_id}', scope: 'read', summary: 'Conversation details', tag, params: ConversationParams, response: dataOf(ConversationSchema) }, async ({ rt, actor, params }) =>
      ok(await dms.getConversation(rt, actor, params.conversation_id)),
    )
    .add(
      {
        method: 'post',
        path: '/dms/{conversation_id}/read',
        scope: 'messages:write',
        summary: 'Record that the caller has read up to a message (it never moves back); channel.read to their own streams',
        tag,
        since: 3,
        params: ConversationParams,
        body: ReadBody,
        errors: ['not_found'],
      },
      async ({ rt, actor, params, body }) => {
        await markRead(rt, actor, params.conversation_id, body.message_id, 'conversation');
      },
    );
  messageRoutes(routes, { base: '/dms/{conversation_id}', param: 'conversation_id', kind: 'conversation', tag, typing: true });
  pinRoutes(routes, { base: '/dms/{conversation_id}', param: 'conversation_id', kind: 'conversation', tag });
}
