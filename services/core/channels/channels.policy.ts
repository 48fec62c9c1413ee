import type { Actor } from '../../../shared/auth.js';
import type { ChannelRow } from './channels.presenter.js';

// Pure permission rules for channels and their members, unit-tested without I/O.
// Visibility (private channels hidden from non-members) is not here: it lives in
// requireReadable (channels.access.ts), the one place that answers 404.

export const isAdmin = (actor: Actor) => actor.role === 'owner' || actor.role === 'admin';

/** Only workspace admins and owners mark a channel as default (auto-joined by new agents). */
export const canSetDefault = (actor: Actor) => isAdmin(actor);

/** How long a channel keeps its messages is the workspace's call (contract §16). */
export const canSetRetention = (actor: Actor) => isAdmin(actor);

/** Renaming or describing a channel: its members, and admins/owners. */
export const canUpdateChannel = (actor: Actor, isMember: boolean) => isMember || isAdmin(actor);

/**
 * Adding a member (interface "Adding a member", rules 2 and 3):
 * - public channel: any workspace member may add anyone, themselves included
 *   (as in Slack, where anyone may join or invite to a public channel);
 * - private channel: only an existing member (any role) may add someone. A
 *   non-member never gets here: the channel is hidden from them (404).
 */
export const canAddMember = (channel: Pick<ChannelRow, 'is_private'>, isMember: boolean) => !channel.is_private || isMember;

/**
 * Removing a member: anyone may remove themselves (leave); in any channel, public
 * or private, its members may remove other members (whoever could add them can
 * take them out again); admins and owners may remove anyone from a channel they
 * can see. Anyone else gets 403 forbidden (docs/decisions.md).
 */
export const canRemoveMember = (actor: Actor, isMember: boolean, targetUserId: string) =>
  targetUserId === actor.userId || isAdmin(actor) || isMember;

/** Archiving and unarchiving a channel (contract §14): owners, admins, and whoever created it. */
export const canArchive = (actor: Actor, channel: Pick<ChannelRow, 'created_by'>) => isAdmin(actor) || channel.created_by === actor.userId;
