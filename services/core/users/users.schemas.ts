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

/** At most 4 prompts an agent suggests: a title (40 characters) and the message it sends (2,000). */
export const SuggestedPrompts = z
  .array(z.strictObject({ title: z.string().min(1).max(40), message: z.string().min(1).max(2000) }))
  .max(4);
export type SuggestedPromptsInput = z.infer<typeof SuggestedPrompts>;

export const UpdateMeBody = z.strictObject({
  name: Name.optional(),
  display_name: DisplayName.optional(),
  avatar_url: AvatarUrl.optional(),
  // Level 3 (contract §12): a new password, with the current one when there is one.
  password: fromLevel({ since: 3 }, Password.optional()),
  current_password: fromLevel({ since: 3 }, z.string().min(1).max(256).optional()),
  // Level 3 (contract §15): an agent's suggested prompts, offered in an empty DM with it.
  suggested_prompts: fromLevel({ since: 3 }, SuggestedPrompts.optional()),
  // Level 3 (contract §14): emails of missed mentions and DMs.
  email_notifications: fromLevel({ since: 3 }, z.enum(['mentions', 'never']).optional()),
});

export const ListUsersQuery = PageQuery.extend({
  is_agent: z.enum(['true', 'false']).transform((v) => v === 'true').optional(),
});

export const UserIdParams = z.object({ user_id: z.string() });
