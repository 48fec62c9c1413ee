import type { Actor } from '../../../shared/auth.js';
import { isAdmin } from '../users/users.policy.js';

// Pure permission rules for user groups (contract §14): owners and admins
// manage them; every member of the workspace reads them (for autocomplete).
export const canManageUserGroups = (actor: Pick<Actor, 'role'>) => isAdmin(actor);
