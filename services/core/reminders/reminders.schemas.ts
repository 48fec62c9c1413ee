import { z } from 'zod';
import { isUuid } from '../../../shared/ids.js';
import { charCount } from '../channels/channels.schemas.js';
import { IsoTime } from '../messages/messages.schemas.js';

export const MAX_REMINDER_TEXT = 4000;

export const CreateReminderBody = z
  .strictObject({
    remind_at: IsoTime,
    text: z
      .string({ error: 'must be a string' })
      .refine((s) => s.trim().length > 0, 'must not be empty or only white space')
      .refine((s) => charCount(s) <= MAX_REMINDER_TEXT, `must be at most ${MAX_REMINDER_TEXT} characters`)
      .optional(),
    message_id: z.string().refine(isUuid, 'must be a message id (a uuid)').optional(),
  })
  .refine((b) => (b.text === undefined) !== (b.message_id === undefined), { message: 'give one of text or message_id', path: ['text'] });
export type CreateReminderInput = z.infer<typeof CreateReminderBody>;

export const ReminderIdParams = z.object({ reminder_id: z.string().refine(isUuid, 'must be a reminder id (a uuid)') });
