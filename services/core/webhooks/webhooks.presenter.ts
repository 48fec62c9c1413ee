import { z } from 'zod';
import type { LevelSpan } from '../../../shared/feature-level.js';
import { Timestamp, named } from '../../../shared/http/responses.js';

/**
 * A hook's posts are signed with its name from level 3: their `display.username`
 * is the hook's name unless a compatible post names itself, so clients show the
 * hook rather than the person who made it. Level 2 leaves `display` as sent.
 */
export const HOOK_NAMES: LevelSpan = { since: 3 };

export interface WebhookRow {
  id: string;
  seq: number;
  workspace_id: string;
  channel_id: string;
  name: string;
  created_by: string | null;
  created_at: Date;
}

/** The Webhook object: its url is the posting address, the only credential needed to post. */
export const WebhookSchema = named(
  'Webhook',
  z.strictObject({
    id: z.string(),
    name: z.string(),
    channel_id: z.string(),
    url: z.string().describe('The posting address; it is the only credential needed to post'),
    created_by: z.string().nullable(),
    created_at: Timestamp,
  }),
);

export const presentWebhook = (row: WebhookRow, publicBaseUrl: string): z.infer<typeof WebhookSchema> => ({
  id: row.id,
  name: row.name,
  channel_id: row.channel_id,
  url: `${publicBaseUrl}/hooks/${row.id}`,
  created_by: row.created_by,
  created_at: row.created_at,
});
