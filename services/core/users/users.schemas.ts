import { z } from 'zod';
import { fromLevel } from '../../../shared/feature-level.js';
import { PageQuery } from '../../../shared/http/envelope.js';
import { Password } from '../auth/passwords.js';

export const Name = z
  .string()
  .min(1)
  .max(80)
  .refine((s) => s.trim().length > 0, 'must not be only white space');
const DisplayName = z.string().max(80).nullable();
const AvatarUrl = z.url({ protocol: /^https?$/ }).max(2048).nullable();
export const Role = z.enum(['owner', 'admin', 'member']);

export const CreateUserBody = z.strictObject({
  name: Name,
  display_name: DisplayName.optional(),
  avatar_url: AvatarUrl.optional(),
  is_agent: z.boolean().optional(),
  role: Role.optional(),
});
export type CreateUserInput = z.infer<typeof CreateUserBody>;

export const CreateAgentBody = CreateUserBody.omit({ is_agent: true });

export const UpdateMeBody = z.strictObject({
  name: Name.optional(),
  display_name: DisplayName.optional(),
  avatar_url: AvatarUrl.optional(),
  // Level 3 (contract §12): a new password, with the current one when there is one.
  password: fromLevel({ since: 3 }, Password.optional()),
  current_password: fromLevel({ since: 3 }, z.string().min(1).max(256).optional()),
  // Level 3 (contract §14): emails of missed mentions and DMs.
  email_notifications: fromLevel({ since: 3 }, z.enum(['mentions', 'never']).optional()),
});

export const ListUsersQuery = PageQuery.extend({
  is_agent: z.enum(['true', 'false']).transform((v) => v === 'true').optional(),
});

export const UserIdParams = z.object({ user_id: z.string() });
