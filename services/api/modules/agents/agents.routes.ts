import { z } from 'zod';
import { ok } from '../../../../shared/http/envelope.js';
import type { RouteTable } from '../../../../shared/http/route.js';
import { dataOf } from '../../../../shared/http/responses.js';
import type { ChannelKind } from '../../../core/channels/channels.access.js';
import { AgentStatusSchema, EphemeralMessageSchema } from '../../../core/agents/agents.presenter.js';
import { EphemeralBody, StatusBody } from '../../../core/agents/agents.schemas.js';
import * as agents from '../../../core/agents/agents.service.js';

/** An agent's working status and ephemeral messages (level 3), under `/channels/{channel_id}` or `/dms/{conversation_id}`. */
export function agentRoutes(routes: RouteTable, o: { base: string; param: string; kind: ChannelKind; tag: string }) {
  const { base, param, kind, tag } = o;
  const P = z.object({ [param]: z.string() });
  routes
    .add(
      {
        method: 'post',
        path: `${base}/status`,
        scope: 'messages:write',
        summary: "An agent member shows its working status (\"\" clears it): agent.status to the conversation's readers, ending at expires_at or with the agent's next post in that thread",
        since: 3,
        tag,
        params: P,
        body: StatusBody,
        response: dataOf(AgentStatusSchema),
        errors: ['forbidden'],
      },
      async ({ rt, actor, params, body }) => ok(await agents.setStatus(rt, actor, params[param]!, kind, body)),
    )
    .add(
      {
        method: 'post',
        path: `${base}/ephemeral`,
        scope: 'messages:write',
        summary: "An agent member sends a message only user_id sees (message.ephemeral to that user's streams); never stored, listed, searched or replayed",
        since: 3,
        tag,
        params: P,
        body: EphemeralBody,
        response: dataOf(EphemeralMessageSchema),
        errors: ['forbidden'],
      },
      async ({ rt, actor, params, body }) => ok(await agents.sendEphemeral(rt, actor, params[param]!, kind, body)),
    );
}
