import { z } from 'zod';
import { Email } from '../auth/auth.schemas.js';
import { Role } from '../users/users.schemas.js';
import { RetentionDays } from '../retention/retention.schemas.js';

export const UpdateWorkspaceBody = z.strictObject({
  name: z
    .string()
    .min(1)
    .max(80)
    .refine((s) => s.trim().length > 0, 'must not be only white space')
    .optional(),
  settings: z
    .strictObject({
      /** Caps human users; null means no limit. Agents never count. */
      max_users: z.number().int().min(1).max(1_000_000).nullable().optional(),
      retention_days: RetentionDays.optional(),
    })
    .optional(),
});

export const UpdateMemberBody = z.strictObject({ role: Role });
/** Level 3 (contract §12): owners and admins also set a person's email (null removes it). */
export const UpdateMemberBodyV3 = z
  .strictObject({ role: Role.optional(), email: Email.nullable().optional() })
  .refine((b) => b.role !== undefined || b.email !== undefined, 'give role, email or both');
export const MemberParams = z.object({ user_id: z.string() });
