import { z } from 'zod';
import { Timestamp, named } from '../../../shared/http/responses.js';

export interface UserGroupRow {
  id: string;
  seq: number;
  workspace_id: string;
  handle: string;
  name: string;
  description: string;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
  /** Aggregated by the store's queries. */
  member_ids: string[];
}

export const UserGroupSchema = named(
  'UserGroup',
  z.strictObject({
    id: z.string(),
    handle: z.string().describe('`@<handle>` in a message mentions the members who can read its conversation'),
    name: z.string(),
    description: z.string(),
    member_ids: z.array(z.string()).describe('People and agents, active ones only'),
    created_by: z.string().nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
  }),
);
export type UserGroupObject = z.infer<typeof UserGroupSchema>;

export const presentUserGroup = (row: UserGroupRow): UserGroupObject => ({
  id: row.id,
  handle: row.handle,
  name: row.name,
  description: row.description,
  member_ids: row.member_ids ?? [],
  created_by: row.created_by,
  created_at: row.created_at,
  updated_at: row.updated_at,
});
