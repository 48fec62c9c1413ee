import type { Actor, WorkspaceRole } from '../../../shared/auth.js';

// Pure permission rules (contract §3), unit-tested without I/O.

export const isAdmin = (actor: Actor) => actor.role === 'owner' || actor.role === 'admin';

/** Agents never create users or agents, whatever their role. */
export const canCreateUsers = (actor: Actor) => isAdmin(actor) && !actor.isAgent;

/** Only an owner grants or removes `owner`. */
export const canAssignRole = (actor: Actor, from: WorkspaceRole, to: WorkspaceRole) =>
  isAdmin(actor) && (actor.role === 'owner' || (from !== 'owner' && to !== 'owner'));

export const canRemoveMember = (actor: Actor, target: { role: WorkspaceRole }) =>
  isAdmin(actor) && (actor.role === 'owner' || target.role !== 'owner');
