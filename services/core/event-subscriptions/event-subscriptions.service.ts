// Event subscriptions (level 3, contract §11; docs/bots.md): an address the
// worker POSTs its owner's events to. Creating one proves the address answers
// (a challenge it must echo) and that it is not on our own network (the one
// outbound fetcher, shared/http/outbound-fetch.ts); delivery is
// event-subscriptions.delivery.ts.
import { randomBytes } from 'node:crypto';
import type { Actor } from '../../../shared/auth.js';
import { AppError, forbidden, invalid, notFound } from '../../../shared/errors.js';
import { decodeCursor, pageOf } from '../../../shared/http/envelope.js';
import type { Runtime } from '../../../shared/runtime.js';
import { OutboundBusy, OutboundFailed, OutboundRefused, urlProblem } from '../../../shared/http/outbound-fetch.js';
import { MAX_ANSWER_BYTES, MAX_SUBSCRIPTIONS_PER_USER, canReach, seesAllSubscriptions } from './event-subscriptions.policy.js';
import { presentDelivery, presentIssuedSubscription, presentSubscription, type SubscriptionRow } from './event-subscriptions.presenter.js';
import { DEFAULT_EVENT_TYPES, type CreateSubscriptionInput } from './event-subscriptions.schemas.js';
import { newSecret } from './event-subscriptions.signature.js';
import * as store from './event-subscriptions.store.js';
import { recordAudit } from '../audit/audit.store.js';

/** The challenge must come back within this long (contract §11). */
export const CHALLENGE_TIMEOUT_MS = 5_000;
/** How long a rotated-out secret keeps signing beside the new one. */
export const PREVIOUS_SECRET_MS = 24 * 3600 * 1000;

const tooMany = () =>
  new AppError('conflict', `a user holds at most ${MAX_SUBSCRIPTIONS_PER_USER} event subscriptions: delete one before creating another`);

/** What came back, for the 400 that says why the challenge failed (short, printable). */
const describe = (text: string) => {
  const flat = text.replace(/[^\x20-\x7e]+/g, ' ').trim();
  return flat ? `"${flat.slice(0, 80)}${flat.length > 80 ? '…' : ''}"` : 'an empty body';
};

/**
 * POSTs the url_verification challenge (within CHALLENGE_TIMEOUT_MS, DNS
 * included, in the owner's share of outbound requests); resolves when the
 * answer echoes it, else throws 400 saying what came back.
 */
async function verifyUrl(rt: Runtime, actor: Actor, url: URL): Promise<void> {
  const challenge = randomBytes(24).toString('base64url');
  let answer;
  try {
    answer = await rt.outbound.fetch(url, {
      method: 'POST',
      body: JSON.stringify({ type: 'url_verification', challenge }),
      headers: { 'content-type': 'application/json', 'user-agent': 'Axid-Events/1' },
      owner: actor.userId,
      allowPrivate: rt.config.eventDelivery.allowPrivate,
      timeoutMs: CHALLENGE_TIMEOUT_MS,
      maxBytes: MAX_ANSWER_BYTES,
    });
  } catch (err) {
    if (err instanceof OutboundBusy) throw new AppError('rate_limited', `url: ${err.message}`, { 'Retry-After': '1' });
    if (err instanceof OutboundRefused || err instanceof OutboundFailed) throw invalid(`url: ${err.message}`);
    throw err;
  }
  const ok = answer.status >= 200 && answer.status < 300;
  const body = answer.body.toString('utf8');
  if (ok && echoes(body, challenge)) return;
  throw invalid(
    `url: the address must answer the url_verification challenge with a 2xx whose body is the challenge (plain text or {"challenge": ...}); it answered ${answer.status}${
      answer.status >= 300 && answer.status < 400 ? ' (redirects are not followed)' : ''
    } with ${describe(body)}`,
  );
}

function echoes(body: string, challenge: string): boolean {
  if (body.trim() === challenge) return true;
  try {
    return (JSON.parse(body) as { challenge?: unknown })?.challenge === challenge;
  } catch {
    return false;
  }
}

export async function createSubscription(rt: Runtime, actor: Actor, input: CreateSubscriptionInput) {
  const problem = urlProblem(input.url, rt.config.eventDelivery.allowPrivate);
  if (problem) throw invalid(`url: ${problem}`);
  const url = new URL(input.url);
  url.hash = '';
  // Refused before the challenge is sent: the sixth never reaches the address.
  if ((await store.countOfUser(rt.db, actor.userId)) >= MAX_SUBSCRIPTIONS_PER_USER) throw tooMany();
  await verifyUrl(rt, actor, url);
  const row = await rt.db.transaction(async (trx) => {
    if ((await store.countOfUserLocked(trx, actor.userId)) >= MAX_SUBSCRIPTIONS_PER_USER) throw tooMany();
    const created = await store.insertSubscription(trx, {
      workspace_id: actor.workspaceId,
      user_id: actor.userId,
      url: url.href,
      events: input.events ?? DEFAULT_EVENT_TYPES,
      secret: newSecret(),
      // A key limited to conversations makes a subscription limited to them (shared/scopes.ts).
      conversation_ids: actor.conversationIds === null ? null : [...actor.conversationIds],
    });
    // The host only: a URL's path or query may carry the receiver's own token.
    await recordAudit(trx, { workspaceId: actor.workspaceId, action: 'event_subscription.created', actor, target: { type: 'event_subscription', id: created.id }, details: { host: url.host, events: created.events } });
    return created;
  });
  return presentIssuedSubscription(row);
}

export async function listSubscriptions(rt: Runtime, actor: Actor, q: { limit: number; cursor?: string; all?: boolean }) {
  if (q.all && !seesAllSubscriptions(actor)) throw forbidden('all=true lists every subscription of the workspace: admins and the owner only');
  const rows = await store.listSubscriptions(rt.db, actor.workspaceId, {
    userId: q.all ? undefined : actor.userId,
    after: decodeCursor(q.cursor),
    limit: q.limit,
  });
  return pageOf(rows, q.limit, presentSubscription);
}

/** The caller's subscription (an admin's reach with all=true); someone else's is 404, as if it did not exist. */
async function reachable(rt: Runtime, actor: Actor, id: string, all = false): Promise<SubscriptionRow> {
  const row = await store.findSubscription(rt.db, actor.workspaceId, id);
  if (!row || !canReach(actor, row, all)) throw notFound('Event subscription');
  return row;
}

export const getSubscription = async (rt: Runtime, actor: Actor, id: string, all?: boolean) => presentSubscription(await reachable(rt, actor, id, all));

export async function deleteSubscription(rt: Runtime, actor: Actor, id: string, all?: boolean): Promise<void> {
  const row = await reachable(rt, actor, id, all);
  await rt.db.transaction(async (trx) => {
    await store.deleteSubscription(trx, row.id);
    await recordAudit(trx, { workspaceId: actor.workspaceId, action: 'event_subscription.deleted', actor, target: { type: 'event_subscription', id: row.id }, details: { owner_id: row.user_id, host: new URL(row.url).host } });
  });
}

export async function rotateSecret(rt: Runtime, actor: Actor, id: string) {
  const row = await reachable(rt, actor, id);
  const rotated = await rt.db.transaction(async (trx) => {
    const changed = await store.rotateSecret(trx, row.id, newSecret(), new Date(Date.now() + PREVIOUS_SECRET_MS));
    if (!changed) throw notFound('Event subscription');
    await recordAudit(trx, { workspaceId: actor.workspaceId, action: 'event_subscription.secret_rotated', actor, target: { type: 'event_subscription', id: row.id } });
    return changed;
  });
  return presentIssuedSubscription(rotated);
}

export async function listDeliveries(rt: Runtime, actor: Actor, id: string, all?: boolean) {
  const row = await reachable(rt, actor, id, all);
  return (await store.listDeliveries(rt.db, row.id)).map(presentDelivery);
}
