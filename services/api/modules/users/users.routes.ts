import { ok, list } from '../../../../shared/http/envelope.js';
import type { RouteTable } from '../../../../shared/http/route.js';
import { dataOf, listOf } from '../../../../shared/http/responses.js';
import { CreatedUserSchema, UserSchema } from '../../../core/users/users.presenter.js';
import { CreateAgentBody, CreateUserBody, ListUsersQuery, UpdateMeBody, UserIdParams } from '../../../core/users/users.schemas.js';
import * as users from '../../../core/users/users.service.js';

export function userRoutes(routes: RouteTable) {
  const tag = 'Users and agents';
  routes
    .add({ method: 'get', path: '/users/me', scope: 'read', summary: 'Profile of the authenticated user', tag, response: dataOf(UserSchema) }, async ({ rt, actor }) =>
      ok(await users.getUser(rt, actor, actor.userId)),
    )
    .add(
      { method: 'patch', path: '/users/me', scope: 'admin', summary: 'Update name, display name, avatar', tag, body: UpdateMeBody, response: dataOf(UserSchema), errors: ['name_taken'], until: 2 },
      async ({ rt, actor, body, ctx }) => ok(await users.updateMe(rt, actor, body, ctx.ip)),
    )
    .add(
      {
        method: 'patch',
        path: '/users/me',
        scope: 'admin',
        summary: 'Update name, display name, avatar, password (with current_password; the other web keys end)',
        tag,
        body: UpdateMeBody,
        response: dataOf(UserSchema),
        errors: ['name_taken', 'forbidden'],
        since: 3,
      },
      async ({ rt, actor, body, ctx }) => ok(await users.updateMe(rt, actor, body, ctx.ip)),
    )
    .add({ method: 'get', path: '/users', scope: 'read', summary: 'List members; is_agent=true filters agents', tag, query: ListUsersQuery, response: listOf(UserSchema) }, async ({ rt, actor, query }) =>
      list(await users.listUsers(rt, actor, query)),
    )
    .add(
      { method: 'post', path: '/users', scope: 'admin', summary: 'Create a user or agent; returns its first API key once', tag, body: CreateUserBody, status: 201, response: dataOf(CreatedUserSchema), errors: ['forbidden', 'user_limit_reached', 'name_taken'] },
      async ({ rt, actor, body }) => ok(await users.createUser(rt, actor, body)),
    )
    .add({ method: 'get', path: '/users/{user_id}', scope: 'read', summary: 'One user', tag, params: UserIdParams, response: dataOf(UserSchema) }, async ({ rt, actor, params }) =>
      ok(await users.getUser(rt, actor, params.user_id)),
    )
    .add(
      { method: 'get', path: '/agents', scope: 'read', summary: 'List agents (same as GET /users?is_agent=true)', tag, query: ListUsersQuery.omit({ is_agent: true }), response: listOf(UserSchema) },
      async ({ rt, actor, query }) => list(await users.listUsers(rt, actor, { ...query, is_agent: true })),
    )
    .add(
      {
        method: 'post',
        path: '/agents',
        scope: 'admin',
        summary: 'Create an agent; returns its API key once and joins it to every default channel',
        tag,
        body: CreateAgentBody,
        status: 201,
        response: dataOf(CreatedUserSchema),
        errors: ['forbidden', 'name_taken'],
      },
      async ({ rt, actor, body }) => ok(await users.createUser(rt, actor, { ...body, is_agent: true })),
    );
}
