import { z } from 'zod';
import { Timestamp, named } from '../../../shared/http/responses.js';
import { MessageSchema } from '../messages/messages.presenter.js';

/** The agent.status event's payload, and the answer to POST .../status. */
export const AgentStatusSchema = named(
  'AgentStatus',
  z.strictObject({
    conversation_id: z.string(),
    thread_id: z.string().nullable(),
    user_id: z.string(),
    status: z.string().describe('"" when cleared'),
    loading_messages: z.array(z.string()),
    expires_at: Timestamp.describe('When clients stop showing it (2 minutes after it was set; now when cleared)'),
  }),
);

/** A message only its addressee sees (message.ephemeral): never stored. */
export const EphemeralMessageSchema = named('EphemeralMessage', MessageSchema.extend({ ephemeral: z.literal(true) }));
