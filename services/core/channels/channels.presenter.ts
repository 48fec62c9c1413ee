import { z } from 'zod';
import { Timestamp, named } from '../../../shared/http/responses.js';
import { readStateFields } from '../read-state/read-state.schemas.js';
import { UserSchema, presentUser, type UserRow } from '../users/users.presenter.js';

export interface ChannelRow {
  id: string;
  seq: number;
  workspace_id: string;
  kind: 'channel' | 'dm' | 'group_dm';
  name: string | null;
  description: string;
  is_private: boolean;
  is_default: boolean;
  parent_channel_id: string | null;
  team_id: string | null;
  member_key: string | null;
  created_by: string | null;
  created_at: Date;
  /** The channel's own retention (migration 140): set, it replaces the workspace's; null then keeps for ever. */
  retention_days?: number | null;
  retention_set?: boolean;
  /**
   * Its parent is a private channel the viewer is not in: the parent's id is
   * not shown (channels.store.ts computes it per viewer; events, which go to
   * many, hide any private parent).
   */
  parent_hidden?: boolean;
}

export const ChannelSchema = named(
  'Channel',
  z.strictObject({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    is_private: z.boolean(),
    is_default: z.boolean(),
    parent_channel_id: z.string().nullable(),
    team_id: z.string().nullable(),
    created_by: z.string().nullable(),
    created_at: Timestamp,
    ...readStateFields,
  }),
);

export type ChannelObject = z.infer<typeof ChannelSchema>;

export const presentChannel = (row: ChannelRow): ChannelObject => ({
  id: row.id,
  name: row.name as string,
  description: row.description,
  is_private: row.is_private,
  is_default: row.is_default,
  parent_channel_id: row.parent_hidden ? null : row.parent_channel_id,
  team_id: row.team_id,
  created_by: row.created_by,
  created_at: row.created_at,
});

export interface MemberRow {
  channel_id: string;
  user_id: string;
  seq: number;
  created_at: Date;
}

/** The ChannelMember record: who is in the channel since when, with the user. */
export const ChannelMemberSchema = named(
  'ChannelMember',
  z.strictObject({
    channel_id: z.string(),
    user_id: z.string(),
    created_at: Timestamp,
    user: UserSchema,
  }),
);

export const presentMember = (row: MemberRow, user: UserRow): z.infer<typeof ChannelMemberSchema> => ({
  channel_id: row.channel_id,
  user_id: row.user_id,
  created_at: row.created_at,
  user: presentUser(user),
});
