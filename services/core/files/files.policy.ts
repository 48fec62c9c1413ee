import type { Actor } from '../../../shared/auth.js';

// Pure permission rules for files (contract §17), unit-tested without I/O.

/** Its uploader, an admin or an owner deletes a file. */
export const canDeleteFile = (actor: Actor, file: { uploader_id: string | null }) =>
  file.uploader_id === actor.userId || actor.role === 'owner' || actor.role === 'admin';
