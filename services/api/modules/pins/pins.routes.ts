import { z } from 'zod';
import { PageQuery, ok } from '../../../../shared/http/envelope.js';
import { Reply, type RouteTable } from '../../../../shared/http/route.js';
import { dataOf, listOf } from '../../../../shared/http/responses.js';
import type { ChannelKind } from '../../../core/channels/channels.access.js';
import { MessageSchema } from '../../../core/messages/messages.presenter.js';
import { isUuid } from '../../../../shared/ids.js';
import * as pins from '../../../core/pins/pins.service.js';

const PinBody = z.strictObject({
  message_id: z.string({ error: 'is required (a message id)' }).refine(isUuid, 'must be a message id (a uuid)'),
});

/** Pins under one parent, `/channels/{channel_id}` or `/dms/{conversation_id}` (level 3, contract §14). */
export function pinRoutes(routes: RouteTable, o: { base: string; param: string; kind: ChannelKind; tag: string }) {
  const { base, param, kind, tag } = o;
  const P = z.object({ [param]: z.string() });
  const PM = z.object({ [param]: z.string(), message_id: z.string() });
  const what = kind === 'channel' ? 'channel' : 'conversation';
  routes
    .add(
      { method: 'get', path: `${base}/pins`, scope: 'read', summary: `The ${what}'s pinned messages, newest pin first`, tag, since: 3, params: P, query: PageQuery, response: listOf(MessageSchema) },
      ({ rt, actor, params, query }) => pins.listPins(rt, actor, params[param]!, kind, query),
    )
    .add(
      {
        method: 'post',
        path: `${base}/pins`, scope: 'channels:write',
        summary: `Pin a message of the ${what} (any member; 200 when it was pinned already); at most 100 pins`,
        tag,
        since: 3,
        params: P,
        body: PinBody,
        status: 201,
        alsoStatus: [200],
        response: dataOf(MessageSchema),
        errors: ['forbidden', 'conflict', 'channel_archived'],
      },
      async ({ rt, actor, params, body }) => {
        const { created, message } = await pins.pinMessage(rt, actor, params[param]!, kind, body.message_id);
        return new Reply(created ? 201 : 200, ok(message));
      },
    )
    .add(
      { method: 'delete', path: `${base}/pins/{message_id}`, scope: 'channels:write', summary: `Unpin a message of the ${what} (any member)`, tag, since: 3, params: PM, errors: ['forbidden', 'channel_archived'] },
      async ({ rt, actor, params }) => {
        await pins.unpinMessage(rt, actor, params[param]!, kind, params.message_id!);
      },
    );
}
