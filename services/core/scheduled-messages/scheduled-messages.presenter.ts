import { z } from 'zod';
import { Timestamp, named } from '../../../shared/http/responses.js';
import { ContentDocumentSchema } from '../messages/messages.presenter.js';

export type ScheduledStatus = 'scheduled' | 'sent' | 'failed';

export interface ScheduledMessageRow {
  id: string;
  seq: number;
  workspace_id: string;
  author_id: string;
  channel_id: string;
  thread_id: string | null;
  content: string;
  content_json: unknown;
  metadata: { type: string; data: Record<string, unknown> } | null;
  send_at: Date;
  status: ScheduledStatus;
  error: string | null;
  message_id: string | null;
  created_at: Date;
}

/** A message to be posted later by its author (level 3, contract §14). */
export const ScheduledMessageSchema = named(
  'ScheduledMessage',
  z.strictObject({
    id: z.string(),
    conversation_id: z.string().describe('The channel or DM conversation it is posted in'),
    thread_id: z.string().nullable(),
    content: z.string(),
    content_json: ContentDocumentSchema.nullable(),
    metadata: z.strictObject({ type: z.string(), data: z.record(z.string(), z.unknown()) }).nullable(),
    send_at: Timestamp,
    status: z.enum(['scheduled', 'sent', 'failed']),
    error: z.string().nullable().describe('Why it was not posted (status failed)'),
    message_id: z.string().nullable().describe('The posted message (status sent)'),
    created_at: Timestamp,
  }),
);
export type ScheduledMessageObject = z.infer<typeof ScheduledMessageSchema>;

export const presentScheduledMessage = (row: ScheduledMessageRow): ScheduledMessageObject => ({
  id: row.id,
  conversation_id: row.channel_id,
  thread_id: row.thread_id,
  content: row.content,
  content_json: (row.content_json ?? null) as ScheduledMessageObject['content_json'],
  metadata: row.metadata,
  send_at: row.send_at,
  status: row.status,
  error: row.error,
  message_id: row.message_id,
  created_at: row.created_at,
});
