import { AppError } from '../../../../shared/errors.js';
import { ok } from '../../../../shared/http/envelope.js';
import type { RouteTable } from '../../../../shared/http/route.js';
import { dataOf } from '../../../../shared/http/responses.js';
import { InteractionSchema } from '../../../core/interactions/interactions.presenter.js';
import { ActionBody } from '../../../core/interactions/interactions.schemas.js';
import * as interactions from '../../../core/interactions/interactions.service.js';
import { z } from 'zod';
import { ApprovalDecisionSchema, FeedbackSchema } from '../../../core/interactions/answers.presenter.js';
import { ApprovalBody, FeedbackBody } from '../../../core/interactions/answers.schemas.js';
import * as answers from '../../../core/interactions/answers.service.js';

export function interactionRoutes(routes: RouteTable) {
  routes
    .add(
      {
        method: 'post',
        path: '/interactions/actions',
        scope: 'messages:write',
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
        scope: 'messages:write',
        summary: "Click a message's actionId button: the interaction.action event goes to the message's author",
        since: 3,
        tag: 'Interactions',
        body: ActionBody,
        status: 202,
        response: dataOf(InteractionSchema),
        errors: ['not_found', 'channel_archived'],
      },
      async ({ rt, actor, body }) => ok(await interactions.invokeAction(rt, actor, body)),
    )
    .add(
      {
        method: 'post',
        path: '/interactions/feedback',
        scope: 'messages:write',
        summary: "Mark a message with feedback buttons positive or negative (null clears; one value per person): its counts change, interaction.feedback goes to its author",
        since: 3,
        tag: 'Interactions',
        body: FeedbackBody,
        response: dataOf(FeedbackSchema),
        errors: ['not_found'],
      },
      async ({ rt, actor, body }) => ok(await answers.giveFeedback(rt, actor, body)),
    )
    .add(
      {
        method: 'post',
        path: '/interactions/approvals',
        scope: 'messages:write',
        summary: "Answer a message's approval request once (its readers, or only its approver_ids): the first answer wins, the message shows it, interaction.approval goes to its author",
        since: 3,
        tag: 'Interactions',
        body: ApprovalBody,
        response: dataOf(ApprovalDecisionSchema),
        errors: ['not_found', 'forbidden', 'conflict', 'gone'],
      },
      async ({ rt, actor, body }) => ok(await answers.answerApproval(rt, actor, body)),
    );
}
