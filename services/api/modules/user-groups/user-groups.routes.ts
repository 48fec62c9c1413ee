import { list, ok } from '../../../../shared/http/envelope.js';
import type { RouteTable } from '../../../../shared/http/route.js';
import { dataOf, listOf } from '../../../../shared/http/responses.js';
import { UserGroupSchema } from '../../../core/user-groups/user-groups.presenter.js';
import { CreateUserGroupBody, ListUserGroupsQuery, SetMembersBody, UpdateUserGroupBody, UserGroupIdParams } from '../../../core/user-groups/user-groups.schemas.js';
import * as groups from '../../../core/user-groups/user-groups.service.js';

const tag = 'User groups';

/** User groups, mentioned as `@<handle>` (level 3, contract §14; docs/team-chat.md). */
export function userGroupRoutes(routes: RouteTable) {
  const since = 3;
  routes
    .add(
      {
        method: 'post',
        path: '/user-groups', scope: 'admin',
        since,
        summary: 'Create a user group (owners and admins)',
        description: '`handle`: 1 to 40 of `a-z 0-9 . _ -`, unique among the active users\' names and the groups\' handles (409 `name_taken`). `member_ids`: active people and agents of the workspace.',
        tag,
        body: CreateUserGroupBody,
        status: 201,
        response: dataOf(UserGroupSchema),
        errors: ['forbidden', 'name_taken'],
      },
      async ({ rt, actor, body }) => ok(await groups.createGroup(rt, actor, body)),
    )
    .add(
      { method: 'get', path: '/user-groups', scope: 'read', since, summary: 'List the workspace\'s user groups', tag, query: ListUserGroupsQuery, response: listOf(UserGroupSchema) },
      async ({ rt, actor, query }) => list(await groups.listGroups(rt, actor, query)),
    )
    .add(
      { method: 'get', path: '/user-groups/{group_id}', scope: 'read', since, summary: 'Get a user group', tag, params: UserGroupIdParams, response: dataOf(UserGroupSchema) },
      async ({ rt, actor, params }) => ok(await groups.getGroup(rt, actor, params.group_id)),
    )
    .add(
      {
        method: 'patch',
        path: '/user-groups/{group_id}', scope: 'admin',
        since,
        summary: 'Change a user group\'s handle, name or description (owners and admins)',
        tag,
        params: UserGroupIdParams,
        body: UpdateUserGroupBody,
        response: dataOf(UserGroupSchema),
        errors: ['forbidden', 'name_taken'],
      },
      async ({ rt, actor, params, body }) => ok(await groups.updateGroup(rt, actor, params.group_id, body)),
    )
    .add(
      {
        method: 'put',
        path: '/user-groups/{group_id}/members', scope: 'admin',
        since,
        summary: 'Replace a user group\'s members with this whole list (owners and admins)',
        tag,
        params: UserGroupIdParams,
        body: SetMembersBody,
        response: dataOf(UserGroupSchema),
        errors: ['forbidden'],
      },
      async ({ rt, actor, params, body }) => ok(await groups.setMembers(rt, actor, params.group_id, body.user_ids)),
    )
    .add(
      { method: 'delete', path: '/user-groups/{group_id}', scope: 'admin', since, summary: 'Delete a user group (owners and admins)', tag, params: UserGroupIdParams, errors: ['forbidden'] },
      async ({ rt, actor, params }) => {
        await groups.deleteGroup(rt, actor, params.group_id);
      },
    );
}
