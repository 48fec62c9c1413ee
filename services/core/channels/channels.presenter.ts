import { z } from 'zod';
import { Timestamp, named } from '../../../shared/http/responses.js';
import { existsAt, fromLevel, type FeatureLevel, type LevelSpan } from '../../../shared/feature-level.js';
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
  /** Archived (level 3, migration 195): read-only until unarchived; null: not archived. */
  archived_at?: Date | null;
  /** How many members, and whether the viewer is one: computed by the query that lists or finds the channel for a viewer (level 3). */
  member_count?: number | string;
  is_member?: boolean;
  /**
   * Its parent is a private channel the viewer is not in: the parent's id is
   * not shown (channels.store.ts computes it per viewer; events, which go to
   * many, hide any private parent).
   */
  parent_hidden?: boolean;
}

/** Archived channels, member_count and is_member exist from level 3 (contract §14). */
export const TEAM_CHANNELS: LevelSpan = { since: 3 };

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
    archived_at: fromLevel(TEAM_CHANNELS, Timestamp.nullable().optional().describe('When the channel was archived (read-only until unarchived); null when it is not (feature level 3)')),
    member_count: fromLevel(TEAM_CHANNELS, z.number().int().optional().describe('How many members the channel has (feature level 3; not in events)')),
    is_member: fromLevel(TEAM_CHANNELS, z.boolean().optional().describe('Whether the caller is a member (feature level 3; not in events, which go to many)')),
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

/**
 * The Channel of a level, made once per runtime (services/core/presenters.ts).
 * Level 3 adds archived_at, and member_count and is_member where the query
 * that read the row computed them for its viewer (events carry neither).
 */
export const channelPresenter = (level: FeatureLevel): ((row: ChannelRow) => ChannelObject) =>
  existsAt(TEAM_CHANNELS, level)
    ? (row) => {
        const channel: ChannelObject = { ...presentChannel(row), archived_at: row.archived_at ?? null };
        if (row.member_count !== undefined) channel.member_count = Number(row.member_count);
        if (row.is_member !== undefined) channel.is_member = Boolean(row.is_member);
        return channel;
      }
    : presentChannel;

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
