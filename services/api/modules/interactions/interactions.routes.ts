import { AppError } from '../../../../shared/errors.js';
import { ok } from '../../../../shared/http/envelope.js';
import type { RouteTable } from '../../../../shared/http/route.js';
import { dataOf } from '../../../../shared/http/responses.js';
import { InteractionSchema } from '../../../core/interactions/interactions.presenter.js';
import { ActionBody } from '../../../core/interactions/interactions.schemas.js';
import * as interactions from '../../../core/interactions/interactions.service.js';
import { z } from 'zod';

export function interactionRoutes(routes: RouteTable) {
  routes
    .add(
      {
        method: 'post',
        path: '/interactions/actions',
        summary: 'Invoke a button actionId handler (not implemented at feature level 2)',
        until: 2,
        tag: 'Interactions',
        body: z.unknown(),
        succeeds: false,
        errors: ['not_implemented'],
      },
      () => {
        throw new AppError('not_implemented', 'button actions are not implemented yet: clients render actionId buttons as disabled');
      },
    )
    .add(
      {
        method: 'post',
        path: '/interactions/actions',
        summary: "Click a message's actionId button: the interaction.action event goes to the message's author",
        since: 3,
        tag: 'Interactions',
        body: ActionBody,
        status: 202,
        response: dataOf(InteractionSchema),
        errors: ['not_found', 'channel_archived'],
      },
      async ({ rt, actor, body }) => ok(await interactions.invokeAction(rt, actor, body)),
    );
}
