import type { Knex } from '../../../shared/db/knex.js';
import type { ContentDocument } from '../messages/messages.presenter.js';
import type { FeedbackCounts } from './answers.presenter.js';

/** The message's document, locked until the transaction ends: answers to it are written one at a time. */
export const lockDocument = (trx: Knex.Transaction, messageId: string) =>
  trx('messages').where({ id: messageId }).forUpdate().first('content_json') as Promise<{ content_json: ContentDocument | null } | undefined>;

/** Sets (or with null, removes) one person's feedback on a message. */
export async function setFeedback(trx: Knex.Transaction, messageId: string, userId: string, value: 'positive' | 'negative' | null) {
  if (value === null) {
    await trx('message_feedback').where({ message_id: messageId, user_id: userId }).delete();
    return;
  }
  await trx('message_feedback')
    .insert({ message_id: messageId, user_id: userId, value })
    .onConflict(['message_id', 'user_id'])
    .merge({ value, updated_at: trx.fn.now() });
}

export async function feedbackCounts(trx: Knex.Transaction, messageId: string): Promise<FeedbackCounts> {
  const rows = (await trx('message_feedback').where({ message_id: messageId }).groupBy('value').select('value', trx.raw('count(*)::int AS n'))) as {
    value: 'positive' | 'negative';
    n: number;
  }[];
  const counts = { positive: 0, negative: 0 };
  for (const r of rows) counts[r.value] = r.n;
  return counts;
}

/** The request's answer, if it has one. */
export const findDecision = (trx: Knex.Transaction, messageId: string) =>
  trx('approval_decisions').where({ message_id: messageId }).first() as Promise<{ decision: string } | undefined>;

/** Records the answer; undefined when another answer was there first (the primary key decides). */
export const insertDecision = async (
  trx: Knex.Transaction,
  row: { message_id: string; workspace_id: string; user_id: string; decision: 'approve' | 'deny'; comment: string | null },
) =>
  (await trx('approval_decisions').insert(row).onConflict('message_id').ignore().returning(['message_id', 'decision', 'user_id', 'comment', 'decided_at']))[0] as
    | { message_id: string; decision: 'approve' | 'deny'; user_id: string | null; comment: string | null; decided_at: Date }
    | undefined;

/** Writes the document back with what the service keeps in it (not an edit: edited_at stays). */
export const writeDocument = (trx: Knex.Transaction, messageId: string, doc: ContentDocument) =>
  trx('messages').where({ id: messageId }).update({ content_json: JSON.stringify(doc) });
