// Feedback and approvals (level 3, contract §15): readers answer a message's
// block_feedback_buttons or block_approval_request. The answer is kept in its
// table (one per person, or one per request) and what readers need to see is
// written into the block's stored props by the service, so every rendering
// of the message (the POST's answer, history pages, search, message.updated)
// carries it with no field of its own:
// - feedback buttons: props.counts {positive, negative};
// - an approval request: props.decision {decision, user_id, comment, decided_at}.
// The message's author (the agent that asked) is told on its own streams.
import type { Actor } from '../../../shared/auth.js';
import { AppError, forbidden, invalid, notFound } from '../../../shared/errors.js';
import { recordEvents, type AxidEvent } from '../../../shared/events.js';
import { isUuid } from '../../../shared/ids.js';
import type { Knex } from '../../../shared/db/knex.js';
import type { Runtime } from '../../../shared/runtime.js';
import { requireReadable } from '../channels/channels.access.js';
import type { ContentDocument, ContentNode, MessageRow } from '../messages/messages.presenter.js';
import * as messages from '../messages/messages.store.js';
import { presentDecision } from './answers.presenter.js';
import type { ApprovalInput, FeedbackInput } from './answers.schemas.js';
import * as store from './answers.store.js';
import { recordAudit } from '../audit/audit.store.js';
import { findActionTarget, type ActionTarget } from './interactions.store.js';

/** The blocks of a document named `name`, at any depth. */
function blocksNamed(doc: ContentDocument | null, name: string): ContentNode[] {
  const found: ContentNode[] = [];
  const stack: ContentNode[] = [...(doc?.content ?? [])];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.type === `block_${name}`) found.push(node);
    if (node.content) stack.push(...node.content);
  }
  return found;
}

const propsOf = (node: ContentNode) => ((node.attrs ??= {}).props ??= {}) as Record<string, unknown>;

/** A message the caller can read (else 404, as one that does not exist). */
async function readableTarget(rt: Runtime, actor: Actor, messageId: string): Promise<ActionTarget> {
  const target = isUuid(messageId) ? await findActionTarget(rt.db, actor.workspaceId, messageId) : undefined;
  if (!target) throw notFound('Message');
  await requireReadable(rt.db, actor, target.channel_id, target.kind === 'channel' ? 'channel' : 'conversation', rt.access).catch((err) => {
    throw err instanceof AppError && err.code === 'not_found' ? notFound('Message') : err;
  });
  return target;
}

/** Writes the document back and records message.updated with the message as it now is, and `also`. */
async function documentChanged(rt: Runtime, trx: Knex.Transaction, target: ActionTarget, doc: ContentDocument, also: AxidEvent[]) {
  await store.writeDocument(trx, target.id, doc);
  const row = (await messages.findMessage(trx, target.channel_id, target.id)) as MessageRow;
  const reactions = await messages.reactionsFor(trx, [target.id]);
  const message = rt.presenters.message(row, reactions.get(target.id));
  const channel: AxidEvent['to'] = { scope: 'channel', workspace_id: row.workspace_id, channel_id: target.channel_id };
  await recordEvents(rt, trx, [{ type: 'message.updated', to: channel, data: { message } }, ...also]);
}

const toAuthor = (actor: Actor, target: ActionTarget): AxidEvent['to'] | null =>
  target.author_id ? { scope: 'users', workspace_id: actor.workspaceId, user_ids: [target.author_id] } : null;

export async function giveFeedback(rt: Runtime, actor: Actor, body: FeedbackInput) {
  const target = await readableTarget(rt, actor, body.message_id);
  if (blocksNamed(target.content_json, 'feedback_buttons').length === 0) throw invalid('message_id: the message has no feedback buttons (block_feedback_buttons)');
  return rt.db.transaction(async (trx) => {
    const locked = await store.lockDocument(trx, target.id);
    if (!locked?.content_json) throw notFound('Message');
    const blocks = blocksNamed(locked.content_json, 'feedback_buttons');
    if (blocks.length === 0) throw invalid('message_id: the message has no feedback buttons (block_feedback_buttons)');
    await store.setFeedback(trx, target.id, actor.userId, body.value);
    const counts = await store.feedbackCounts(trx, target.id);
    for (const block of blocks) propsOf(block).counts = counts;
    const to = toAuthor(actor, target);
    const told: AxidEvent[] = to ? [{ type: 'interaction.feedback', to, data: { message_id: target.id, user_id: actor.userId, value: body.value } }] : [];
    await documentChanged(rt, trx, target, locked.content_json, told);
    await recordAudit(trx, { workspaceId: actor.workspaceId, action: 'feedback.given', actor, target: { type: 'message', id: target.id }, details: { value: body.value } });
    return { message_id: target.id, user_id: actor.userId, value: body.value, counts };
  });
}

/**
 * Answers an approval request: its readers, or only its approver_ids; the
 * first answer wins (409 conflict after: the row lock and the table's primary
 * key), one past expires_at answers 410 gone.
 */
export async function answerApproval(rt: Runtime, actor: Actor, body: ApprovalInput) {
  const target = await readableTarget(rt, actor, body.message_id);
  const noRequest = () => invalid('message_id: the message has no approval request (block_approval_request)');
  const [first] = blocksNamed(target.content_json, 'approval_request');
  if (!first) throw noRequest();
  const approvers = propsOf(first).approver_ids as string[] | undefined;
  if (approvers && !approvers.includes(actor.userId)) throw forbidden('only the approvers the request names (approver_ids) answer it');
  return rt.db.transaction(async (trx) => {
    const locked = await store.lockDocument(trx, target.id);
    const [request] = blocksNamed(locked?.content_json ?? null, 'approval_request');
    if (!locked?.content_json || !request) throw noRequest();
    if (await store.findDecision(trx, target.id)) throw new AppError('conflict', 'the request was already answered: the first answer stands');
    const expiresAt = Date.parse(String(propsOf(request).expires_at));
    if (!(expiresAt > Date.now())) throw new AppError('gone', 'the request expired: ask for approval again');
    const row = await store.insertDecision(trx, {
      message_id: target.id,
      workspace_id: actor.workspaceId,
      user_id: actor.userId,
      decision: body.decision,
      comment: body.comment ?? null,
    });
    if (!row) throw new AppError('conflict', 'the request was already answered: the first answer stands');
    const decision = presentDecision(row);
    propsOf(request).decision = { decision: decision.decision, user_id: decision.user_id, comment: decision.comment, decided_at: decision.decided_at };
    const to = toAuthor(actor, target);
    const told: AxidEvent[] = to
      ? [{ type: 'interaction.approval', to, data: { message_id: target.id, decision: body.decision, user_id: actor.userId, comment: decision.comment } }]
      : [];
    await documentChanged(rt, trx, target, locked.content_json, told);
    await recordAudit(trx, { workspaceId: actor.workspaceId, action: 'approval.answered', actor, target: { type: 'message', id: target.id }, details: { decision: body.decision, comment: decision.comment } });
    return decision;
  });
}
