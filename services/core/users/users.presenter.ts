import { z } from 'zod';
import { Timestamp, named } from '../../../shared/http/responses.js';

export interface UserRow {
  id: string;
  seq: number;
  workspace_id: string;
  name: string;
  display_name: string | null;
  avatar_url: string | null;
  role: 'owner' | 'admin' | 'member';
  is_agent: boolean;
  created_at: Date;
  deactivated_at: Date | null;
}

export const UserSchema = named(
  'User',
  z.strictObject({
    id: z.string(),
    name: z.string(),
    display_name: z.string().nullable(),
    avatar_url: z.string().nullable(),
    role: z.enum(['owner', 'admin', 'member']),
    is_agent: z.boolean(),
    created_at: Timestamp,
  }),
);

export type UserObject = z.infer<typeof UserSchema>;

/** A user as created: with its first API key (shown once) and the default channels it joined. */
export const CreatedUserSchema = named(
  'CreatedUser',
  UserSchema.extend({
    api_key: z.string().describe('The first API key of the user; shown once'),
    joined_channels: z.array(z.strictObject({ id: z.string(), name: z.string() })),
  }),
);

export const presentUser = (row: UserRow): UserObject => ({
  id: row.id,
  name: row.name,
  display_name: row.display_name,
  avatar_url: row.avatar_url,
  role: row.role,
  is_agent: row.is_agent,
  created_at: row.created_at,
});
