import { PageQuery, list, ok } from '../../../../shared/http/envelope.js';
import type { RouteTable } from '../../../../shared/http/route.js';
import { dataOf, listOf } from '../../../../shared/http/responses.js';
import { CreatedInviteSchema, InviteSchema } from '../../../core/invites/invites.presenter.js';
import { CreateInviteBody, InviteParams } from '../../../core/invites/invites.schemas.js';
import * as invites from '../../../core/invites/invites.service.js';

// Invites (contract §12, level 3); accepting one is POST /auth/accept-invite (auth.routes.ts).
export function inviteRoutes(routes: RouteTable) {
  const tag = 'Sign-in';
  routes
    .add(
      {
        method: 'post',
        path: '/invites',
        scope: 'admin',
        summary: 'Invite a person: a link that creates their account (owners and admins)',
        tag,
        body: CreateInviteBody,
        status: 201,
        response: dataOf(CreatedInviteSchema),
        errors: ['forbidden'],
        since: 3,
      },
      async ({ rt, actor, body }) => ok(await invites.createInvite(rt, actor, body)),
    )
    .add(
      { method: 'get', path: '/invites', scope: 'read', summary: 'Unused, live invites (owners and admins)', tag, query: PageQuery, response: listOf(InviteSchema), errors: ['forbidden'], since: 3 },
      async ({ rt, actor, query }) => list(await invites.listInvites(rt, actor, query)),
    )
    .add(
      { method: 'delete', path: '/invites/{invite_id}', scope: 'admin', summary: 'Revoke an invite (owners and admins)', tag, params: InviteParams, errors: ['forbidden'], since: 3 },
      async ({ rt, actor, params }) => {
        await invites.revokeInvite(rt, actor, params.invite_id);
      },
    );
}
