// An agent's answer blocks (level 3, docs/bots.md "Feedback and approvals"):
// feedback buttons and an approval request, drawn from the block's props and
// answered through /interactions. The service writes the answers into the
// block (`counts`, `decision`) and sends message.updated, so what every
// reader sees follows from the message itself; only which thumb is mine is
// kept here (the message does not say).
import { useState } from 'preact/hooks';
import { answerApproval, approvalProblem, sendFeedback, type FeedbackValue } from '../lib/agents.js';
import { errorMessage } from '../lib/api.js';
import type { Message } from '../lib/types.js';
import { displayName, useClient } from './context.js';
import { Icon } from './icons.js';

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const str = (v: unknown) => (typeof v === 'string' ? v : '');

export function FeedbackBlock({ props, message }: { props: Record<string, unknown>; message: Message }) {
  const client = useClient();
  const [mine, setMine] = useState<FeedbackValue | null>(null);
  const [error, setError] = useState<string | null>(null);
  // The answer's counts until the message.updated carrying them arrives; then the message's, which follow everyone's answers.
  const [answered, setAnswered] = useState<{ counts: { positive: number; negative: number }; over: unknown } | null>(null);
  const stored = props.counts as Record<string, unknown> | undefined;
  const counts = answered && answered.over === props.counts ? answered.counts : { positive: num(stored?.positive), negative: num(stored?.negative) };
  const enabled = client.store.features.agents && message.id && !message.id.startsWith('local:');
  const choose = (value: FeedbackValue) => async () => {
    const next = mine === value ? null : value;
    try {
      const answer = await sendFeedback(client, message.id, next);
      setMine(next);
      setAnswered({ counts: answer.counts, over: props.counts });
      setError(null);
    } catch (err) {
      setError(errorMessage(err));
    }
  };
  const button = (value: FeedbackValue, label: string, icon: 'thumbsUp' | 'thumbsDown', count: number) => (
    // Named by what it shows (its count), the word for the icon before it: "Helpful 2".
    <button type="button" class={`btn small feedback${mine === value ? ' mine' : ''}`} aria-pressed={mine === value} disabled={!enabled} onClick={choose(value)}>
      <Icon name={icon} size={14} /> <span class="sr-only">{label}</span> {count}
    </button>
  );
  return (
    <div class="block-feedback" role="group" aria-label="Was this helpful?">
      <span class="muted">Was this helpful?</span>
      {button('positive', 'Helpful', 'thumbsUp', counts.positive)}
      {button('negative', 'Not helpful', 'thumbsDown', counts.negative)}
      {mine ? <span class="muted" role="status">Thanks for the feedback.</span> : null}
      {error ? <span class="error" role="alert">{error}</span> : null}
    </div>
  );
}

interface Decision {
  decision?: unknown;
  user_id?: unknown;
  comment?: unknown;
  decided_at?: unknown;
}

export function ApprovalBlock({ props, message }: { props: Record<string, unknown>; message: Message }) {
  const client = useClient();
  const s = client.store;
  const [comment, setComment] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [answered, setAnswered] = useState<Decision | null>(null);
  const decision = (props.decision as Decision | undefined) ?? answered;
  const approvers = Array.isArray(props.approver_ids) ? (props.approver_ids as unknown[]).map(str) : null;
  const expiresAt = Date.parse(str(props.expires_at));
  const expired = Number.isFinite(expiresAt) && expiresAt <= Date.now();
  const mayAnswer = client.store.features.agents && (!approvers || approvers.includes(s.me?.id ?? ''));
  const approveLabel = str(props.approve_label) || 'Approve';
  const denyLabel = str(props.deny_label) || 'Deny';
  const answer = (d: 'approve' | 'deny') => async () => {
    setBusy(true);
    try {
      setAnswered(await answerApproval(client, message.id, d, comment.trim()));
      setError(null);
    } catch (err) {
      setError(approvalProblem(err) ?? errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  const title = str(props.title);
  let state;
  if (decision?.decision === 'approve' || decision?.decision === 'deny') {
    const who = displayName(s.users.get(str(decision.user_id)));
    const when = Date.parse(str(decision.decided_at));
    state = (
      <p class={`approval-state ${decision.decision === 'approve' ? 'approved' : 'denied'}`} role="status">
        <strong>{decision.decision === 'approve' ? 'Approved' : 'Denied'}</strong> by {who}
        {Number.isFinite(when) ? <> · <time dateTime={str(decision.decided_at)}>{new Date(when).toLocaleString()}</time></> : null}
        {str(decision.comment) ? <span class="approval-comment">“{str(decision.comment)}”</span> : null}
      </p>
    );
  } else if (expired) {
    state = <p class="approval-state muted">Expired without an answer.</p>;
  } else if (!mayAnswer) {
    state = <p class="approval-state muted">Waiting for {approvers ? approvers.map((id) => displayName(s.users.get(id))).join(', ') : 'an answer'}.</p>;
  } else {
    state = (
      <div class="approval-answer">
        <label class="approval-comment-field">
          <span class="sr-only">Comment on “{title}” (optional)</span>
          <input value={comment} placeholder="Comment (optional)" maxLength={1000} onInput={(e) => setComment(e.currentTarget.value)} />
        </label>
        <button type="button" class="btn btn-primary small" disabled={busy} onClick={answer('approve')}>{approveLabel}</button>
        <button type="button" class="btn btn-danger small" disabled={busy} onClick={answer('deny')}>{denyLabel}</button>
      </div>
    );
  }
  return (
    <div class="block-approval card" role="group" aria-label={`Approval request: ${title}`}>
      <strong class="approval-title">{title}</strong>
      {props.description ? <p class="approval-description">{str(props.description)}</p> : null}
      {!decision && !expired && Number.isFinite(expiresAt) ? <p class="muted small-print">Open until {new Date(expiresAt).toLocaleString()}</p> : null}
      {state}
      {error ? <p class="error" role="alert">{error}</p> : null}
    </div>
  );
}
