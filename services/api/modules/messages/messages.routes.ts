import { z } from 'zod';
import { PageQuery, ok } from '../../../../shared/http/envelope.js';
import { Reply, type RouteTable } from '../../../../shared/http/route.js';
import { dataOf, listOf } from '../../../../shared/http/responses.js';
import type { ChannelKind } from '../../../core/channels/channels.access.js';
import { MessageEditSchema, MessageSchema, ReactionSchema } from '../../../core/messages/messages.presenter.js';
import { AppendBody, FinishBody, ListMessagesQuery, PostMessageBody, ReactionBody, SCHEDULED_POSTS, UpdateMessageBody } from '../../../core/messages/messages.schemas.js';
import * as messages from '../../../core/messages/messages.service.js';
import { ScheduledMessageSchema } from '../../../core/scheduled-messages/scheduled-messages.presenter.js';
import * as scheduled from '../../../core/scheduled-messages/scheduled-messages.service.js';

/**
 * Message routes under one parent: `/channels/{channel_id}` (kind channel) or
 * `/dms/{conversation_id}` (kind conversation). Both run the same service; the
 * kind makes requireReadable hide the other kind.
 */
export function messageRoutes(routes: RouteTable, o: { base: string; param: string; kind: ChannelKind; tag: string; typing: boolean }) {
  const { base, param, kind, tag } = o;
  const P = z.object({ [param]: z.string() });
  const PM = z.object({ [param]: z.string(), message_id: z.string() });
  const PE = z.object({ [param]: z.string(), message_id: z.string(), emoji: z.string() });
  const what = kind === 'channel' ? 'channel' : 'conversation';
  routes
    .add(
      {
        method: 'get',
        path: `${base}/messages`,
        scope: 'read',
        summary: `List ${what} messages newest first; thread_id lists that thread's replies`,
        tag,
        params: P,
        query: ListMessagesQuery,
        response: listOf(MessageSchema),
      },
      ({ rt, actor, params, query }) => messages.listMessages(rt, actor, params[param]!, kind, query),
    )
    .add(
      {
        method: 'post',
        path: `${base}/messages`,
        scope: 'messages:write',
        summary: `Post a message (thread_id makes a reply)`,
        tag,
        params: P,
        body: PostMessageBody,
        status: 201,
        response: dataOf(MessageSchema),
        // With send_at, the message is scheduled instead (contract §14).
        otherResponses: [{ status: 202, response: dataOf(ScheduledMessageSchema), ...SCHEDULED_POSTS }],
        errors: ['forbidden', 'channel_archived', 'agent_chain_limit'],
        idempotent: 'actor',
      },
      async ({ rt, actor, params, body }) => {
        // The 202 body is otherResponses' (the handler's type knows only the main response).
        if (body.send_at !== undefined) return new Reply(202, ok(await scheduled.scheduleMessage(rt, actor, params[param]!, kind, { ...body, send_at: body.send_at }))) as Reply<never>;
        return ok(await messages.createMessage(rt, actor, params[param]!, kind, body));
      },
    )
    .add({ method: 'get', path: `${base}/messages/{message_id}`, scope: 'read', summary: 'One message', tag, params: PM, response: dataOf(MessageSchema) }, async ({ rt, actor, params }) =>
      ok(await messages.getMessage(rt, actor, params[param]!, kind, params.message_id!)),
    )
    .add(
      { method: 'patch', path: `${base}/messages/{message_id}`, scope: 'messages:write', summary: 'Edit a message (author only)', tag, params: PM, body: UpdateMessageBody, response: dataOf(MessageSchema), errors: ['forbidden', 'channel_archived'] },
      async ({ rt, actor, params, body }) => ok(await messages.updateMessage(rt, actor, params[param]!, kind, params.message_id!, body)),
    )
    .add(
      { method: 'delete', path: `${base}/messages/{message_id}`, scope: 'messages:write', summary: 'Delete a message (author, admin or owner)', tag, params: PM, errors: ['forbidden', 'channel_archived'] },
      async ({ rt, actor, params }) => {
        await messages.deleteMessage(rt, actor, params[param]!, kind, params.message_id!);
      },
    )
    .add(
      {
        method: 'post',
        path: `${base}/messages/{message_id}/append`,
        scope: 'messages:write',
        summary: 'Append to a streamed reply (its author); message.appended carries the delta',
        since: 3,
        tag,
        params: PM,
        body: AppendBody,
        response: dataOf(MessageSchema),
        errors: ['forbidden', 'conflict', 'channel_archived'],
      },
      async ({ rt, actor, params, body }) => ok(await messages.appendToMessage(rt, actor, params[param]!, kind, params.message_id!, body)),
    )
    .add(
      {
        method: 'post',
        path: `${base}/messages/{message_id}/finish`,
        scope: 'messages:write',
        summary: 'Finish a streamed reply (its author), optionally with its final content_json and metadata',
        since: 3,
        tag,
        params: PM,
        body: FinishBody,
        response: dataOf(MessageSchema),
        errors: ['forbidden', 'conflict', 'channel_archived'],
      },
      async ({ rt, actor, params, body }) => ok(await messages.finishMessage(rt, actor, params[param]!, kind, params.message_id!, body)),
    )
    .add(
      {
        method: 'get',
        path: `${base}/messages/{message_id}/edits`,
        scope: 'read',
        summary: 'Earlier versions of a message (edit history), newest first',
        since: 3,
        tag,
        params: PM,
        query: PageQuery,
        response: listOf(MessageEditSchema),
      },
      ({ rt, actor, params, query }) => messages.listEdits(rt, actor, params[param]!, kind, params.message_id!, query),
    )
    .add(
      {
        method: 'post',
        path: `${base}/messages/{message_id}/reactions`,
        scope: 'messages:write',
        summary: 'Add a reaction; adding one the caller already added changes nothing and answers it again',
        tag,
        params: PM,
        body: ReactionBody,
        status: 201,
        response: dataOf(ReactionSchema),
        errors: ['forbidden', 'channel_archived'],
      },
      async ({ rt, actor, params, body }) => ok((await messages.addReaction(rt, actor, params[param]!, kind, params.message_id!, body.emoji)).reaction),
    )
    .add(
      { method: 'delete', path: `${base}/messages/{message_id}/reactions/{emoji}`, scope: 'messages:write', summary: 'Remove own reaction', tag, params: PE, errors: ['channel_archived'] },
      async ({ rt, actor, params }) => {
        await messages.removeReaction(rt, actor, params[param]!, kind, params.message_id!, params.emoji!);
      },
    );
  if (o.typing) {
    routes.add({ method: 'post', path: `${base}/typing`, scope: 'messages:write', summary: 'Send a typing indicator', tag, params: P, status: 204, errors: ['forbidden', 'channel_archived'] }, async ({ rt, actor, params }) => {
      await messages.sendTyping(rt, actor, params[param]!, kind);
    });
  }
}
