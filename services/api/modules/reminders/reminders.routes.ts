import { PageQuery, list, ok } from '../../../../shared/http/envelope.js';
import type { RouteTable } from '../../../../shared/http/route.js';
import { dataOf, listOf } from '../../../../shared/http/responses.js';
import { ReminderSchema } from '../../../core/reminders/reminders.presenter.js';
import { CreateReminderBody, ReminderIdParams } from '../../../core/reminders/reminders.schemas.js';
import * as reminders from '../../../core/reminders/reminders.service.js';

const tag = 'Reminders';

/** The caller's reminders, level 3. */
export function reminderRoutes(routes: RouteTable) {
  routes
    .add(
      {
        method: 'post',
        path: '/reminders', scope: 'messages:write',
        summary: 'Be reminded at remind_at (1 minute to 120 days ahead) of a text or a message: "Axid" sends you a DM',
        since: 3,
        tag,
        body: CreateReminderBody,
        status: 201,
        response: dataOf(ReminderSchema),
        errors: ['not_found'],
      },
      async ({ rt, actor, body }) => ok(await reminders.createReminder(rt, actor, body)),
    )
    .add({ method: 'get', path: '/reminders', scope: 'read', summary: 'Your reminders, newest first', since: 3, tag, query: PageQuery, response: listOf(ReminderSchema) }, async ({ rt, actor, query }) =>
      list(await reminders.listReminders(rt, actor, query)),
    )
    .add({ method: 'delete', path: '/reminders/{reminder_id}', scope: 'messages:write', summary: 'Delete a reminder not sent yet', since: 3, tag, params: ReminderIdParams, errors: ['conflict'] }, async ({ rt, actor, params }) => {
      await reminders.deleteReminder(rt, actor, params.reminder_id);
    });
}
