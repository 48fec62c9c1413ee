import { z } from 'zod';
import { PageQuery } from '../../../shared/http/envelope.js';
import { isUuid } from '../../../shared/ids.js';
import { RetentionDays } from '../retention/retention.schemas.js';
import { fromLevel } from '../../../shared/feature-level.js';
import { TEAM_CHANNELS } from './channels.presenter.js';

/** Length in characters as people count them (code points), not UTF-16 units. */
export const charCount = (s: string) => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

/** Channel names: 1 to 80 characters, kept exactly as given (no slugging, no case folding). */
export const ChannelName = z
  .string()
  .refine((s) => charCount(s) >= 1 && charCount(s) <= 80, 'must be 1 to 80 characters')
  .refine((s) => s.trim().length > 0, 'must not be only white space');

const Description = z.string().refine((s) => charCount(s) <= 1000, 'must be at most 1000 characters');
const Uuid = (what: string) => z.string().refine(isUuid, `must be ${what} (a uuid)`);

export const CreateChannelBody = z.strictObject({
  name: ChannelName,
  description: Description.optional(),
  is_private: z.boolean().optional(),
  is_default: z.boolean().optional(),
  parent_channel_id: Uuid('a channel id').nullable().optional(),
  team_id: Uuid('a team id').nullable().optional(),
});
export type CreateChannelInput = z.infer<typeof CreateChannelBody>;

export const UpdateChannelBody = z.strictObject({
  name: ChannelName.optional(),
  description: Description.optional(),
  is_default: z.boolean().optional(),
  /** Owners and admins (contract §16, any level): days this channel's messages are kept, whatever the workspace's; null: for ever. */
  retention_days: RetentionDays.optional(),
});
export type UpdateChannelInput = z.infer<typeof UpdateChannelBody>;

export const ChannelParams = z.object({ channel_id: z.string() });
export const MemberParams = z.object({ channel_id: z.string(), user_id: z.string() });

export const AddMemberBody = z.strictObject({
  user_id: z.string({ error: 'is required (a user id)' }).refine(isUuid, 'must be a user id (a uuid)'),
});

export const ListQuery = PageQuery;

/** GET /channels: level 3 leaves archived channels out unless `include_archived=true`. */
export const ListChannelsQuery = PageQuery.extend({
  include_archived: fromLevel(
    TEAM_CHANNELS,
    z
      .enum(['true', 'false'])
      .transform((v) => v === 'true')
      .optional()
      .describe('true: archived channels too (feature level 3)'),
  ),
});
export type ListChannelsInput = z.infer<typeof ListChannelsQuery>;
