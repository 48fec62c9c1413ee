import { z } from 'zod';
import { Timestamp, named } from '../../../shared/http/responses.js';

export interface CommandRow {
  workspace_id: string;
  name: string;
  user_id: string;
  description: string;
  usage: string | null;
  created_at: Date;
}

export const CommandSchema = named(
  'Command',
  z.strictObject({
    name: z.string(),
    description: z.string(),
    usage: z.string().nullable(),
    user_id: z.string().describe('The agent that answers it'),
  }),
);

export const presentCommand = (row: CommandRow): z.infer<typeof CommandSchema> => ({
  name: row.name,
  description: row.description,
  usage: row.usage,
  user_id: row.user_id,
});

/** The command.invoked event's payload. */
export const CommandInvocationSchema = named(
  'CommandInvocation',
  z.strictObject({
    id: z.string(),
    command: z.string(),
    text: z.string(),
    user_id: z.string().describe('Who invoked it'),
    conversation_id: z.string(),
    thread_id: z.string().nullable(),
    created_at: Timestamp,
  }),
);
