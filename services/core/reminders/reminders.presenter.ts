import { z } from 'zod';
import { Timestamp, named } from '../../../shared/http/responses.js';
import type { ScheduledStatus } from '../scheduled-messages/scheduled-messages.presenter.js';

export interface ReminderRow {
  id: string;
  seq: number;
  workspace_id: string;
  user_id: string;
  text: string | null;
  message_id: string | null;
  channel_id: string | null;
  remind_at: Date;
  status: ScheduledStatus;
  error: string | null;
  sent_message_id: string | null;
  created_at: Date;
}

/** A reminder: at remind_at the workspace's agent "Axid" sends its owner a DM (level 3, contract §14). */
export const ReminderSchema = named(
  'Reminder',
  z.strictObject({
    id: z.string(),
    text: z.string().nullable(),
    message_id: z.string().nullable().describe('The message it links to'),
    conversation_id: z.string().nullable().describe("The linked message's conversation"),
    remind_at: Timestamp,
    status: z.enum(['scheduled', 'sent', 'failed']),
    error: z.string().nullable(),
    created_at: Timestamp,
  }),
);
export type ReminderObject = z.infer<typeof ReminderSchema>;

export const presentReminder = (row: ReminderRow): ReminderObject => ({
  id: row.id,
  text: row.text,
  message_id: row.message_id,
  conversation_id: row.channel_id,
  remind_at: row.remind_at,
  status: row.status,
  error: row.error,
  created_at: row.created_at,
});
