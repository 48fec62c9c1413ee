import { z } from 'zod';

const MessageIdField = z.string({ error: 'is required (a message id)' }).min(1, 'is required (a message id)');

/** `POST /interactions/feedback` (level 3): a reader's mark on a message with feedback buttons; null clears it. */
export const FeedbackBody = z.strictObject({
  message_id: MessageIdField,
  value: z.enum(['positive', 'negative']).nullable(),
});
export type FeedbackInput = z.infer<typeof FeedbackBody>;

/** `POST /interactions/approvals` (level 3): the one answer to a message's approval request. */
export const ApprovalBody = z.strictObject({
  message_id: MessageIdField,
  decision: z.enum(['approve', 'deny']),
  comment: z.string().max(1000).optional(),
});
export type ApprovalInput = z.infer<typeof ApprovalBody>;
