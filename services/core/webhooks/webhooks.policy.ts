import type { Actor } from '../../../shared/auth.js';

// Pure permission rules for incoming webhooks.

const isAdmin = (actor: Actor) => actor.role === 'owner' || actor.role === 'admin';

/** Admins and owners see every hook of the workspace; others the hooks they created. */
export const seesAllWebhooks = isAdmin;

/** The creator, an admin or the owner deletes a hook. */
export const canDeleteWebhook = (actor: Actor, hook: { created_by: string | null }) => isAdmin(actor) || hook.created_by === actor.userId;
