import type { Actor } from '../../../shared/auth.js';
import { isAdmin } from '../users/users.policy.js';

// Pure permission rules for event subscriptions (contract §11).

/** A user holds at most this many subscriptions: the sixth is 409 conflict. */
export const MAX_SUBSCRIPTIONS_PER_USER = 5;

/** `?all=true` is for admins and the owner: they list and delete every subscription of the workspace. */
export const seesAllSubscriptions = isAdmin;

/** A subscription is its creator's; with `?all=true` an admin's too. */
export const canReach = (actor: Actor, sub: { user_id: string }, all: boolean) => sub.user_id === actor.userId || (all && isAdmin(actor));

/** At most this much of a receiver's answer is read (the challenge is all we ever look at). */
export const MAX_ANSWER_BYTES = 16 * 1024;
