import { z } from 'zod';
import { Timestamp, named } from '../../../shared/http/responses.js';

export interface InteractionRow {
  id: string;
  message_id: string;
  channel_id: string;
  action_id: string;
  user_id: string | null;
  created_at: Date;
}

export const InteractionSchema = named(
  'Interaction',
  z.strictObject({
    id: z.string(),
    message_id: z.string(),
    channel_id: z.string(),
    action_id: z.string().describe('The `actionId` of the button clicked'),
    user_id: z.string().nullable().describe('Who clicked'),
    created_at: Timestamp,
  }),
);

export const presentInteraction = (row: InteractionRow): z.infer<typeof InteractionSchema> => ({
  id: row.id,
  message_id: row.message_id,
  channel_id: row.channel_id,
  action_id: row.action_id,
  user_id: row.user_id,
  created_at: row.created_at,
});
