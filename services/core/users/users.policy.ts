import type { Actor, WorkspaceRole } from '../../../shared/auth.js';

// Pure permission rules (who may what: docs/decisions.md), unit-tested without I/O.

export const isAdmin = (actor: Pick<Actor, 'role'>) => actor.role === 'owner' || actor.role === 'admin';

/** A person's email is seen by that person and by owners and admins (contract §12). */
export const canSeeEmail = (viewer: Pick<Actor, 'userId' | 'role'>, userId: string) => viewer.userId === userId || isAdmin(viewer);

/** Agents never create users or agents, whatever their role. */
export const canCreateUsers = (actor: Actor) => isAdmin(actor) && !actor.isAgent;

/** Only an owner grants or removes `owner`. */
export const canAssignRole = (actor: Actor, from: WorkspaceRole, to: WorkspaceRole) =>
  isAdmin(actor) && (actor.role === 'owner' || (from !== 'owner' && to !== 'owner'));

export const canRemoveMember = (actor: Actor, target: { role: WorkspaceRole }) =>
  isAdmin(actor) && (actor.role === 'owner' || target.role !== 'owner');

/** A person as the grantor of what they made (an invite, a reset link), judged by their role now. */
export const asGrantor = (user: { id: string; workspace_id: string; role: WorkspaceRole; is_agent: boolean }): Actor => ({
  keyId: '',
  userId: user.id,
  workspaceId: user.workspace_id,
  role: user.role,
  isAgent: user.is_agent,
  // Judged by the role alone: what a key may do was checked when the thing was made.
  scopes: null,
  conversationIds: null,
});
