import type { Actor } from '../../../shared/auth.js';

// Pure permission rules for messages (contract §5), unit-tested without I/O.

const isAdmin = (actor: Actor) => actor.role === 'owner' || actor.role === 'admin';

/** Posting, reacting and typing need membership; reading a public channel does not. */
export const canParticipate = (isMember: boolean) => isMember;

/** Only the author edits a message. */
export const canEditMessage = (actor: Actor, message: { author_id: string | null }) => message.author_id === actor.userId;

/** The author, an admin or an owner deletes a message. */
export const canDeleteMessage = (actor: Actor, message: { author_id: string | null }) =>
  message.author_id === actor.userId || isAdmin(actor);
