import { z } from 'zod';
import { PageQuery, list, ok } from '../../../../shared/http/envelope.js';
import type { RouteTable } from '../../../../shared/http/route.js';
import { dataOf, listOf } from '../../../../shared/http/responses.js';
import { CommandSchema } from '../../../core/commands/commands.presenter.js';
import { CommandsBody, InvokeBody } from '../../../core/commands/commands.schemas.js';
import * as commands from '../../../core/commands/commands.service.js';

export function commandRoutes(routes: RouteTable) {
  const tag = 'Commands';
  routes
    .add(
      {
        method: 'put',
        path: '/users/me/commands',
        scope: 'admin',
        summary: "An agent replaces its slash commands (at most 50; names unique in the workspace, /remind is built in)",
        since: 3,
        tag,
        body: CommandsBody,
        response: dataOf(z.array(CommandSchema)),
        errors: ['forbidden', 'name_taken'],
      },
      async ({ rt, actor, body }) => ok(await commands.putCommands(rt, actor, body)),
    )
    .add(
      { method: 'get', path: '/commands', scope: 'read', summary: "Every agent's slash commands in the workspace (for autocomplete)", since: 3, tag, query: PageQuery, response: listOf(CommandSchema) },
      async ({ rt, actor, query }) => list(await commands.listCommands(rt, actor, query)),
    )
    .add(
      {
        method: 'post',
        path: '/commands/invoke',
        scope: 'messages:write',
        summary: "Invoke an agent's command in a conversation both are members of: command.invoked to the agent's streams and event subscriptions only",
        since: 3,
        tag,
        body: InvokeBody,
        status: 202,
        response: dataOf(z.strictObject({ id: z.string() })),
        errors: ['not_found'],
      },
      async ({ rt, actor, body }) => ok(await commands.invokeCommand(rt, actor, body)),
    );
}
