// User groups (level 3, contract §14; docs/team-chat.md): named sets of
// people and agents that `@<handle>` mentions. Owners and admins manage them;
// every member reads them. Each change is a workspace event.
import type { Actor } from '../../../shared/auth.js';
import type { Knex } from '../../../shared/db/knex.js';
import { AppError, forbidden, invalid, isUniqueViolation, notFound } from '../../../shared/errors.js';
import { recordEvents, type AxidEvent } from '../../../shared/events.js';
import { decodeCursor, pageOf } from '../../../shared/http/envelope.js';
import type { Runtime } from '../../../shared/runtime.js';
import { canManageUserGroups } from './user-groups.policy.js';
import { presentUserGroup, type UserGroupObject } from './user-groups.presenter.js';
import type { CreateUserGroupInput, UpdateUserGroupInput } from './user-groups.schemas.js';
import * as store from './user-groups.store.js';

const handleTaken = (handle: string) => new AppError('name_taken', `"${handle}" is already the name of a user or the handle of a group in this workspace`);
const mustManage = (actor: Actor) => {
  if (!canManageUserGroups(actor)) throw forbidden('only workspace owners and admins manage user groups');
};
const toWorkspace = (workspaceId: string): AxidEvent['to'] => ({ scope: 'workspace', workspace_id: workspaceId });

async function checkMembers(trx: Knex.Transaction, workspaceId: string, field: string, ids: string[]) {
  const unknown = await store.strangers(trx, workspaceId, ids);
  if (unknown.length > 0) throw invalid(`${field}: ${unknown[0]} is not an active user of this workspace`);
}

/** Runs a change of handles under the workspace's handle lock; a unique violation (a race past it) is name_taken too. */
async function withHandle<T>(rt: Runtime, actor: Actor, handle: string | undefined, exceptGroupId: string | undefined, change: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  try {
    return await rt.db.transaction(async (trx) => {
      if (handle !== undefined) {
        await store.lockHandles(trx, actor.workspaceId);
        if (await store.handleTaken(trx, actor.workspaceId, handle, exceptGroupId)) throw handleTaken(handle);
      }
      return change(trx);
    });
  } catch (err) {
    if (handle !== undefined && isUniqueViolation(err, 'user_groups_workspace_handle')) throw handleTaken(handle);
    throw err;
  }
}

async function reload(trx: Knex.Transaction, workspaceId: string, id: string): Promise<UserGroupObject> {
  const row = await store.findGroup(trx, workspaceId, id);
  if (!row) throw notFound('User group');
  return presentUserGroup(row);
}

export async function createGroup(rt: Runtime, actor: Actor, input: CreateUserGroupInput): Promise<UserGroupObject> {
  mustManage(actor);
  return withHandle(rt, actor, input.handle, undefined, async (trx) => {
    await checkMembers(trx, actor.workspaceId, 'member_ids', input.member_ids);
    const id = await store.insertGroup(trx, {
      workspace_id: actor.workspaceId,
      handle: input.handle,
      name: input.name,
      description: input.description ?? '',
      created_by: actor.userId,
    });
    await store.setMembers(trx, id, input.member_ids);
    const group = await reload(trx, actor.workspaceId, id);
    await recordEvents(rt, trx, [{ type: 'user_group.created', to: toWorkspace(actor.workspaceId), data: { user_group: group } }]);
    return group;
  });
}

export async function listGroups(rt: Runtime, actor: Actor, q: { limit: number; cursor?: string }) {
  const rows = await store.listGroups(rt.db, actor.workspaceId, { after: decodeCursor(q.cursor), limit: q.limit });
  return pageOf(rows, q.limit, presentUserGroup);
}

export async function getGroup(rt: Runtime, actor: Actor, id: string): Promise<UserGroupObject> {
  const row = await store.findGroup(rt.db, actor.workspaceId, id);
  if (!row) throw notFound('User group');
  return presentUserGroup(row);
}

async function requireGroup(rt: Runtime, actor: Actor, id: string) {
  mustManage(actor);
  const row = await store.findGroup(rt.db, actor.workspaceId, id);
  if (!row) throw notFound('User group');
  return row;
}

async function changed(rt: Runtime, trx: Knex.Transaction, actor: Actor, id: string) {
  const group = await reload(trx, actor.workspaceId, id);
  await recordEvents(rt, trx, [{ type: 'user_group.updated', to: toWorkspace(actor.workspaceId), data: { user_group: group } }]);
  return group;
}

export async function updateGroup(rt: Runtime, actor: Actor, id: string, input: UpdateUserGroupInput): Promise<UserGroupObject> {
  const row = await requireGroup(rt, actor, id);
  const handle = input.handle !== undefined && input.handle !== row.handle ? input.handle : undefined;
  return withHandle(rt, actor, handle, row.id, async (trx) => {
    const patch = { ...(input.handle !== undefined ? { handle: input.handle } : {}), ...(input.name !== undefined ? { name: input.name } : {}), ...(input.description !== undefined ? { description: input.description } : {}) };
    if (!(await store.updateGroup(trx, row.id, patch))) throw notFound('User group');
    return changed(rt, trx, actor, row.id);
  });
}

export async function setMembers(rt: Runtime, actor: Actor, id: string, userIds: string[]): Promise<UserGroupObject> {
  const row = await requireGroup(rt, actor, id);
  return rt.db.transaction(async (trx) => {
    // The update locks the group: two whole lists at once are applied one after the other.
    if (!(await store.updateGroup(trx, row.id, {}))) throw notFound('User group');
    await checkMembers(trx, actor.workspaceId, 'user_ids', userIds);
    await store.setMembers(trx, row.id, userIds);
    return changed(rt, trx, actor, row.id);
  });
}

export async function deleteGroup(rt: Runtime, actor: Actor, id: string): Promise<void> {
  const row = await requireGroup(rt, actor, id);
  await rt.db.transaction(async (trx) => {
    if (!(await store.deleteGroup(trx, actor.workspaceId, row.id))) throw notFound('User group');
    await recordEvents(rt, trx, [{ type: 'user_group.deleted', to: toWorkspace(actor.workspaceId), data: { user_group_id: row.id } }]);
  });
}
