import { PageQuery, list, ok } from '../../../../shared/http/envelope.js';
import type { RouteTable } from '../../../../shared/http/route.js';
import { dataOf, listOf } from '../../../../shared/http/responses.js';
import { UserSchema } from '../../../core/users/users.presenter.js';
import { WorkspaceSchema } from '../../../core/workspaces/workspaces.presenter.js';
import * as users from '../../../core/users/users.service.js';
import { MemberParams, UpdateMemberBody, UpdateMemberBodyV3, UpdateWorkspaceBody } from '../../../core/workspaces/workspaces.schemas.js';
import { OneTimeLinkSchema } from '../../../core/auth/auth.schemas.js';
import { createPasswordResetLink } from '../../../core/auth/auth.service.js';
import * as workspaces from '../../../core/workspaces/workspaces.service.js';

export function workspaceRoutes(routes: RouteTable) {
  const tag = 'Workspace';
  routes
    .add({ method: 'get', path: '/workspaces/current', scope: 'read', summary: 'Current workspace details', tag, response: dataOf(WorkspaceSchema) }, async ({ rt, actor }) =>
      ok(await workspaces.getWorkspace(rt, actor)),
    )
    .add(
      { method: 'patch', path: '/workspaces/current', scope: 'admin', summary: 'Update workspace name and settings', tag, body: UpdateWorkspaceBody, response: dataOf(WorkspaceSchema), errors: ['forbidden'] },
      async ({ rt, actor, body }) => ok(await workspaces.updateWorkspace(rt, actor, body)),
    )
    .add({ method: 'get', path: '/workspaces/current/members', scope: 'read', summary: 'List members', tag, query: PageQuery, response: listOf(UserSchema) }, async ({ rt, actor, query }) =>
      list(await users.listUsers(rt, actor, query)),
    )
    .add(
      {
        method: 'patch',
        path: '/workspaces/current/members/{user_id}',
        scope: 'admin',
        summary: "Update a member's role",
        tag,
        params: MemberParams,
        body: UpdateMemberBody,
        response: dataOf(UserSchema),
        errors: ['forbidden', 'conflict'],
        until: 2,
      },
      async ({ rt, actor, params, body }) => ok(await workspaces.updateMemberRole(rt, actor, params.user_id, body.role)),
    )
    .add(
      {
        method: 'patch',
        path: '/workspaces/current/members/{user_id}',
        scope: 'admin',
        summary: "Update a member's role or email",
        tag,
        params: MemberParams,
        body: UpdateMemberBodyV3,
        response: dataOf(UserSchema),
        errors: ['forbidden', 'conflict'],
        since: 3,
      },
      async ({ rt, actor, params, body }) => ok(await workspaces.updateMember(rt, actor, params.user_id, body)),
    )
    .add(
      {
        method: 'post',
        path: '/workspaces/current/members/{user_id}/password-reset',
        scope: 'admin',
        summary: 'Make a one-time link the member sets a new password with',
        tag,
        params: MemberParams,
        status: 201,
        response: dataOf(OneTimeLinkSchema),
        errors: ['forbidden'],
        since: 3,
      },
      async ({ rt, actor, params }) => ok(await createPasswordResetLink(rt, actor, params.user_id)),
    )
    .add(
      {
        method: 'post',
        path: '/workspaces/current/members/{user_id}/reactivate', scope: 'admin',
        summary: 'Bring a removed member back with their role, without their old keys (owners and admins)',
        tag,
        params: MemberParams,
        response: dataOf(UserSchema),
        errors: ['forbidden', 'name_taken', 'conflict', 'user_limit_reached'],
        since: 3,
      },
      async ({ rt, actor, params }) => ok(await workspaces.reactivateMember(rt, actor, params.user_id)),
    )
    .add(
      { method: 'delete', path: '/workspaces/current/members/{user_id}', scope: 'admin', summary: 'Remove a member', tag, params: MemberParams, errors: ['forbidden', 'conflict'] },
      async ({ rt, actor, params }) => {
        await workspaces.removeMember(rt, actor, params.user_id);
      },
    );
}
