import { z } from 'zod';
import { isUuid } from '../../../shared/ids.js';
import { ContentJson, Content, IsoTime, Metadata } from '../messages/messages.schemas.js';

/** Farthest ahead a message or reminder may be scheduled. */
export const MAX_LEAD_DAYS = 120;

export const ScheduledMessageIdParams = z.object({
  scheduled_message_id: z.string().refine(isUuid, 'must be a scheduled message id (a uuid)'),
});

export const UpdateScheduledMessageBody = z.strictObject({
  content: Content.optional(),
  content_json: ContentJson.optional(),
  metadata: Metadata.nullable().optional(),
  send_at: IsoTime.optional(),
});
export type UpdateScheduledMessageInput = z.infer<typeof UpdateScheduledMessageBody>;
