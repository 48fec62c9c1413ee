import { z } from 'zod';
import { Timestamp, named } from '../../../shared/http/responses.js';

export const FeedbackCountsSchema = named('FeedbackCounts', z.strictObject({ positive: z.number().int(), negative: z.number().int() }));
export type FeedbackCounts = z.infer<typeof FeedbackCountsSchema>;

/** The answer to POST /interactions/feedback: the caller's value and the message's counts after it. */
export const FeedbackSchema = named(
  'Feedback',
  z.strictObject({ message_id: z.string(), user_id: z.string(), value: z.enum(['positive', 'negative']).nullable(), counts: FeedbackCountsSchema }),
);

/** An approval request's answer, as the message's block shows it (props.decision) and POST /interactions/approvals answers it. */
export const ApprovalDecisionSchema = named(
  'ApprovalDecision',
  z.strictObject({
    message_id: z.string(),
    decision: z.enum(['approve', 'deny']),
    user_id: z.string().nullable(),
    comment: z.string().nullable(),
    decided_at: Timestamp,
  }),
);
export type ApprovalDecision = z.infer<typeof ApprovalDecisionSchema>;

export const presentDecision = (row: { message_id: string; decision: 'approve' | 'deny'; user_id: string | null; comment: string | null; decided_at: Date }): ApprovalDecision => ({
  message_id: row.message_id,
  decision: row.decision,
  user_id: row.user_id,
  comment: row.comment,
  decided_at: row.decided_at,
});
