import { z } from 'zod';
import { PageQuery } from '../../../shared/http/envelope.js';

/** The characters of a handle, as `@<handle>` in content is read (user-groups.mentions.ts). */
export const HANDLE_PATTERN = /^[a-z0-9._-]{1,40}$/;
/** A group holds at most this many members (a mention reaches each). */
export const MAX_GROUP_MEMBERS = 1000;

/** Group ids that are not user groups: who `@here` and `@channel` reached (user-groups.mentions.ts). */
export const HERE = 'here';
export const CHANNEL = 'channel';
/** Handles no group may take: they mean something already. */
const RESERVED_HANDLES: readonly string[] = [HERE, CHANNEL, 'everyone'];

export const Handle = z
  .string()
  .regex(HANDLE_PATTERN, 'must be 1 to 40 of a-z 0-9 . _ -')
  .refine((h) => !RESERVED_HANDLES.includes(h), `must not be one of ${RESERVED_HANDLES.join(', ')} (they are mentions already)`);
const GroupName = z
  .string()
  .min(1)
  .max(80)
  .refine((s) => s.trim().length > 0, 'must not be only white space');
const Description = z.string().max(250);
const MemberIds = z
  .array(z.uuid())
  .max(MAX_GROUP_MEMBERS)
  .refine((ids) => new Set(ids).size === ids.length, 'must not name a user twice');

export const CreateUserGroupBody = z.strictObject({ handle: Handle, name: GroupName, description: Description.optional(), member_ids: MemberIds });
export type CreateUserGroupInput = z.infer<typeof CreateUserGroupBody>;

export const UpdateUserGroupBody = z.strictObject({ handle: Handle.optional(), name: GroupName.optional(), description: Description.optional() });
export type UpdateUserGroupInput = z.infer<typeof UpdateUserGroupBody>;

export const SetMembersBody = z.strictObject({ user_ids: MemberIds });

export const UserGroupIdParams = z.object({ group_id: z.string() });
export const ListUserGroupsQuery = PageQuery;
