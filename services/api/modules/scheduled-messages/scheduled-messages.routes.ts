import { PageQuery, list, ok } from '../../../../shared/http/envelope.js';
import type { RouteTable } from '../../../../shared/http/route.js';
import { dataOf, listOf } from '../../../../shared/http/responses.js';
import { ScheduledMessageSchema } from '../../../core/scheduled-messages/scheduled-messages.presenter.js';
import { ScheduledMessageIdParams, UpdateScheduledMessageBody } from '../../../core/scheduled-messages/scheduled-messages.schemas.js';
import * as scheduled from '../../../core/scheduled-messages/scheduled-messages.service.js';

const tag = 'Scheduled messages';

/** The caller's scheduled messages (made by POST .../messages with send_at), level 3. */
export function scheduledMessageRoutes(routes: RouteTable) {
  routes
    .add(
      { method: 'get', path: '/scheduled-messages', scope: 'read', summary: 'Your scheduled messages (scheduled, sent and failed), newest first', since: 3, tag, query: PageQuery, response: listOf(ScheduledMessageSchema) },
      async ({ rt, actor, query }) => list(await scheduled.listScheduledMessages(rt, actor, query)),
    )
    .add(
      {
        method: 'patch',
        path: '/scheduled-messages/{scheduled_message_id}', scope: 'messages:write',
        summary: 'Change a scheduled message (content, content_json, metadata, send_at) while it is scheduled',
        since: 3,
        tag,
        params: ScheduledMessageIdParams,
        body: UpdateScheduledMessageBody,
        response: dataOf(ScheduledMessageSchema),
        errors: ['conflict'],
      },
      async ({ rt, actor, params, body }) => ok(await scheduled.updateScheduledMessage(rt, actor, params.scheduled_message_id, body)),
    )
    .add(
      { method: 'delete', path: '/scheduled-messages/{scheduled_message_id}', scope: 'messages:write', summary: 'Delete a scheduled message while it is scheduled', since: 3, tag, params: ScheduledMessageIdParams, errors: ['conflict'] },
      async ({ rt, actor, params }) => {
        await scheduled.deleteScheduledMessage(rt, actor, params.scheduled_message_id);
      },
    );
}
