import { z } from 'zod';
import { Email } from '../auth/auth.schemas.js';
import { Role } from '../users/users.schemas.js';

export const CreateInviteBody = z.strictObject({
  role: Role.optional(),
  email: Email.nullable().optional(),
  expires_in_hours: z.number().int().min(1).max(720).optional(),
});

export const InviteParams = z.object({ invite_id: z.string() });
