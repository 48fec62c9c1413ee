import type { Runtime } from '../../../shared/runtime.js';
import type { Actor } from '../../../shared/auth.js';
import { issueApiKey } from '../../../shared/auth.js';
import type { Knex } from '../../../shared/db/knex.js';
import { AppError, forbidden, invalid, isUniqueViolation, notFound } from '../../../shared/errors.js';
import { deleteCodesOf } from '../auth/codes.store.js';
import * as invites from '../invites/invites.store.js';
import { emailTaken, enforceUserLimit, nameTaken } from '../users/users.service.js';
import { recordEvents } from '../../../shared/events.js';
import * as memberships from '../channels/channels.store.js';
import { isAdmin, canAssignRole, canRemoveMember } from '../users/users.policy.js';
import { presentUser } from '../users/users.presenter.js';
import * as users from '../users/users.store.js';
import { presentWorkspace } from './workspaces.presenter.js';
import * as store from './workspaces.store.js';
import { recordAudit } from '../audit/audit.store.js';

/** A new workspace with its owner and the owner's first key (bootstrap, tests). */
export async function createWorkspaceWithOwner(
  db: Knex,
  o: { name: string; ownerName: string; key?: string },
): Promise<{ workspace: ReturnType<typeof presentWorkspace>; owner: ReturnType<typeof presentUser>; key: string }> {
  return db.transaction(async (trx) => {
    const workspace = await store.insertWorkspace(trx, o.name);
    const owner = await users.insertUser(trx, {
      workspace_id: workspace.id,
      name: o.ownerName,
      display_name: null,
      avatar_url: null,
      role: 'owner',
      is_agent: false,
    });
    const apiKey = await issueApiKey(trx, { workspaceId: workspace.id, userId: owner.id, name: 'bootstrap', key: o.key });
    return { workspace: presentWorkspace(workspace), owner: presentUser(owner), key: apiKey.key };
  });
}

export async function getWorkspace(rt: Runtime, actor: Actor) {
  const row = await rt.reads.read(actor, (db) => store.findWorkspace(db, actor.workspaceId));
  if (!row) throw notFound('Workspace');
  return rt.presenters.workspace(row);
}

export async function updateWorkspace(rt: Runtime, actor: Actor, patch: { name?: string; settings?: { max_users?: number | null; retention_days?: number | null } }) {
  if (!isAdmin(actor)) throw forbidden('only workspace owners and admins update the workspace');
  const row = await rt.db.transaction(async (trx) => {
    const before = patch.settings?.retention_days !== undefined ? await store.findWorkspaceForUpdate(trx, actor.workspaceId) : undefined;
    const updated = await store.updateWorkspace(trx, actor.workspaceId, patch);
    const [from, to] = [before?.settings.retention_days ?? null, updated.settings.retention_days ?? null];
    if (before && from !== to) await recordAudit(trx, { workspaceId: actor.workspaceId, action: 'retention.changed', actor, target: { type: 'workspace', id: actor.workspaceId }, details: { from, to } });
    return updated;
  });
  return rt.presenters.workspace(row);
}

export async function updateMemberRole(rt: Runtime, actor: Actor, userId: string, role: 'owner' | 'admin' | 'member') {
  return updateMember(rt, actor, userId, { role });
}

/** A member's role and (level 3) email, by an owner or admin. */
export async function updateMember(rt: Runtime, actor: Actor, userId: string, patch: { role?: 'owner' | 'admin' | 'member'; email?: string | null }) {
  const db = rt.db;
  if (!isAdmin(actor)) throw forbidden('only workspace owners and admins change roles');
  try {
    return await db.transaction(async (trx) => {
      // Serialize role changes per workspace so "the last owner stays" holds under concurrency.
      await trx('workspaces').where({ id: actor.workspaceId }).forUpdate().first('id');
      const target = await users.findActiveUser(trx, actor.workspaceId, userId);
      if (!target) throw notFound('User');
      const role = patch.role ?? target.role;
      if (!canAssignRole(actor, target.role, role)) throw forbidden('only an owner grants or removes the owner role');
      if (target.role === 'owner' && role !== 'owner' && (await users.countActiveOwners(trx, actor.workspaceId)) <= 1) {
        throw new AppError('conflict', 'the last owner cannot stop being owner: make someone else owner first');
      }
      if (patch.email !== undefined) {
        if (target.is_agent) throw invalid('email: agents have no email');
        if (!canRemoveMember(actor, target)) throw forbidden("only an owner sets an owner's email");
      }
      const updated = await users.updateUser(trx, userId, { role, ...(patch.email !== undefined ? { email: patch.email?.trim() ?? null } : {}) });
      if (role !== target.role) await recordAudit(trx, { workspaceId: actor.workspaceId, action: 'member.role_changed', actor, target: { type: 'user', id: userId }, details: { from: target.role, to: role } });
      if (patch.email !== undefined && updated.email !== target.email) await recordAudit(trx, { workspaceId: actor.workspaceId, action: 'member.email_changed', actor, target: { type: 'user', id: userId }, details: { from: target.email, to: updated.email } });
      await recordEvents(rt, trx, [
        { type: 'member.updated', to: { scope: 'workspace', workspace_id: actor.workspaceId }, data: { user: presentUser(updated) } },
      ]);
      return rt.presenters.userTo(actor)(updated);
    });
  } catch (err) {
    if (isUniqueViolation(err, 'users_workspace_email')) throw emailTaken();
    throw err;
  }
}

export async function removeMember(rt: Runtime, actor: Actor, userId: string) {
  const db = rt.db;
  if (!isAdmin(actor)) throw forbidden('only workspace owners and admins remove members');
  await db.transaction(async (trx) => {
    await trx('workspaces').where({ id: actor.workspaceId }).forUpdate().first('id');
    const target = await users.findActiveUser(trx, actor.workspaceId, userId);
    if (!target) throw notFound('User');
    if (!canRemoveMember(actor, target)) throw forbidden('only an owner removes an owner');
    if (target.role === 'owner' && (await users.countActiveOwners(trx, actor.workspaceId)) <= 1) {
      throw new AppError('conflict', 'the last owner cannot be removed');
    }
    await users.deactivateUser(trx, userId);
    await recordAudit(trx, { workspaceId: actor.workspaceId, action: 'member.removed', actor, target: { type: 'user', id: userId }, details: { name: target.name, role: target.role, is_agent: target.is_agent } });
    await memberships.deleteAllMemberships(trx, userId);
    // What they could still let people in with ends too: invites they made, one-time codes.
    await invites.revokeInvitesBy(trx, userId);
    await deleteCodesOf(trx, userId);
    await recordEvents(rt, trx, [
      { type: 'member.removed', to: { scope: 'workspace', workspace_id: actor.workspaceId }, data: { user_id: userId } },
    ]);
  });
}

/**
 * Brings a removed member back (level 3, contract §14): owners and admins
 * (only an owner brings back an owner), with the role they had and none of
 * their old keys (removal revoked them): a person signs in again, an agent
 * gets a new key from an owner or admin (POST /users/{user_id}/api-keys).
 * They are back in their direct conversations, not in the channels they left.
 * A name or email someone else took meanwhile: 409; a full workspace: 403
 * user_limit_reached. Bringing back someone active changes nothing.
 */
export async function reactivateMember(rt: Runtime, actor: Actor, userId: string) {
  if (!isAdmin(actor)) throw forbidden('only workspace owners and admins reactivate members');
  let name = '';
  try {
    return await rt.db.transaction(async (trx) => {
      // The workspace row first, as removal takes it: the two never wait on each other crosswise.
      await trx('workspaces').where({ id: actor.workspaceId }).forUpdate().first('id');
      const removed = await users.findRemovedUserForUpdate(trx, actor.workspaceId, userId);
      if (!removed) {
        const active = await users.findActiveUser(trx, actor.workspaceId, userId);
        if (!active) throw notFound('User');
        return rt.presenters.userTo(actor)(active);
      }
      if (!canRemoveMember(actor, removed)) throw forbidden('only an owner reactivates an owner');
      name = removed.name;
      if (!removed.is_agent) await enforceUserLimit(trx, actor.workspaceId);
      const user = await users.reactivateUser(trx, removed.id);
      await memberships.restoreConversationMemberships(trx, actor.workspaceId, user.id);
      await recordAudit(trx, { workspaceId: actor.workspaceId, action: 'member.reactivated', actor, target: { type: 'user', id: user.id }, details: { name: user.name, role: user.role, is_agent: user.is_agent } });
      await recordEvents(rt, trx, [{ type: 'member.updated', to: { scope: 'workspace', workspace_id: actor.workspaceId }, data: { user: presentUser(user) } }]);
      return rt.presenters.userTo(actor)(user);
    });
  } catch (err) {
    if (isUniqueViolation(err, 'users_workspace_name')) throw nameTaken(name);
    if (isUniqueViolation(err, 'users_workspace_email')) throw emailTaken();
    throw err;
  }
}
