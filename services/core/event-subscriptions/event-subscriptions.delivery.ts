// Delivering events to subscriptions (contract §11; docs/bots.md). The worker
// (services/worker/event-deliveries.ts) reads the event stream as a consumer
// group, turns each entry into one job per subscription that may want it
// (`deliveriesFor`), and runs each job through `deliver`: visibility decided
// now, as the owner's stream would, a signed POST through the one outbound
// fetcher (shared/http/outbound-fetch.ts) in the owner's share,
// the attempt logged, and the subscription disabled after 24 h of failures.
import { isInternalEvent, recordEvents, streamReceives, type AxidEvent } from '../../../shared/events.js';
import type { GroupEntry } from '../../../shared/stream-group-reader.js';
import { entryTime } from '../../../shared/stream-reader.js';
import type { Runtime } from '../../../shared/runtime.js';
import { isMember, membershipsAmong } from '../channels/channels.store.js';
import { OutboundFailed, OutboundRefused } from '../../../shared/http/outbound-fetch.js';
import { reachesEvent } from '../../../shared/scopes.js';
import { presentSubscription, type SubscriptionRow } from './event-subscriptions.presenter.js';
import { MAX_ANSWER_BYTES } from './event-subscriptions.policy.js';
import { signatureHeader } from './event-subscriptions.signature.js';
import * as store from './event-subscriptions.store.js';

/** One event for one subscription: a job of the delivery queue. */
export interface DeliveryJob {
  subscriptionId: string;
  /** The subscription's owner: attempts take a slot of the owner's share (services/worker/event-deliveries.ts). Absent in jobs queued before it was added. */
  ownerId?: string;
  event: {
    /** Stable across re-reads of the same entry: the outbox id (or, for ephemeral events, the stream and entry id). */
    id: string;
    type: AxidEvent['type'];
    created_at: string;
    to: AxidEvent['to'];
    data: AxidEvent['data'];
  };
  /** The event's trace context (shared/tracing.ts): the delivery's span joins the trace of the change. */
  trace?: string;
}

/** The event id receivers deduplicate on. */
export const eventIdOf = (entry: GroupEntry) => (entry.outboxId !== null ? `evt_${entry.outboxId}` : `evt_${entry.stream}_${entry.entryId.replace('-', '_')}`);

/** Job ids make a second enqueue of the same delivery (an entry claimed again after a crash) a no-op. BullMQ refuses ':'. */
export const deliveryJobId = (job: DeliveryJob) => `evd-${job.subscriptionId}-${job.event.id}`;

/**
 * The deliveries a batch of stream entries makes: for each event, the active
 * subscriptions of its workspace that take its type and whose owner's stream
 * gets it now (membership read once for the batch). Delivery decides again,
 * at its own time (`deliver`).
 */
export async function deliveriesFor(rt: Runtime, entries: GroupEntry[]): Promise<DeliveryJob[]> {
  const wanted = entries.filter((e) => !isInternalEvent(e.event.type));
  if (wanted.length === 0) return [];
  const subs = await store.activeSubscriptionsOf(rt.db, [...new Set(wanted.map((e) => e.event.to.workspace_id))]);
  if (subs.length === 0) return [];
  const byWorkspace = new Map<string, typeof subs>();
  for (const sub of subs) byWorkspace.set(sub.workspace_id, [...(byWorkspace.get(sub.workspace_id) ?? []), sub]);

  const pairs: { entry: GroupEntry; sub: (typeof subs)[number] }[] = [];
  for (const entry of wanted) {
    for (const sub of byWorkspace.get(entry.event.to.workspace_id) ?? []) {
      if (
        sub.events.includes(entry.event.type) &&
        reachesEvent({ conversationIds: sub.conversation_ids }, entry.event) &&
        streamReceives(entry.event, { userId: sub.user_id, workspaceId: sub.workspace_id }, () => true)
      )
        pairs.push({ entry, sub });
    }
  }
  const channelIds = new Set<string>();
  for (const { entry } of pairs) if (entry.event.to.scope === 'channel') channelIds.add(entry.event.to.channel_id);
  const members = await membershipsAmong(rt.db, [...channelIds], [...new Set(pairs.map((p) => p.sub.user_id))]);
  const isMemberNow = (channelId: string, owner: { userId: string }) => members.has(`${channelId}:${owner.userId}`);

  return pairs
    .filter(({ entry, sub }) => streamReceives(entry.event, { userId: sub.user_id, workspaceId: sub.workspace_id }, isMemberNow))
    .map(({ entry, sub }) => ({
      subscriptionId: sub.id,
      ownerId: sub.user_id,
      event: { id: eventIdOf(entry), type: entry.event.type, created_at: new Date(entryTime(entry.entryId)).toISOString(), to: entry.event.to, data: entry.event.data },
      ...(entry.trace ? { trace: entry.trace } : {}),
    }));
}

/** Whether the owner's stream would get the event now (the gateway's rule, membership from the database). */
async function ownerSees(rt: Runtime, sub: SubscriptionRow, event: DeliveryJob['event']): Promise<boolean> {
  const owner = { userId: sub.user_id, workspaceId: sub.workspace_id };
  // Made by a key limited to conversations: only their events (shared/scopes.ts).
  if (!reachesEvent({ conversationIds: sub.conversation_ids }, event)) return false;
  if (streamReceives(event, owner, () => false)) return true;
  if (event.to.scope !== 'channel' || !streamReceives(event, owner, () => true)) return false;
  return isMember(rt.db, event.to.channel_id, sub.user_id);
}

/**
 * What became of an attempt: `delivered` (2xx), `retry` (failed, try again
 * later), `refused` (a private address: logged, not retried), `gave_up` (the
 * event failed for the whole retry window), `disabled` (the subscription
 * failed for the whole window and was disabled now), `skipped` (nothing to
 * send: the subscription is gone or disabled, or its owner may not see it).
 */
export type DeliveryOutcome = 'delivered' | 'retry' | 'refused' | 'gave_up' | 'disabled' | 'skipped';

export interface AttemptResult {
  outcome: DeliveryOutcome;
  /** How long the POST took (absent when none was made). */
  durationMs?: number;
}

/** The body a receiver gets: the event as on the stream, with its id and subscription. */
export const deliveryBody = (job: DeliveryJob) =>
  JSON.stringify({
    id: job.event.id,
    type: job.event.type,
    created_at: job.event.created_at,
    subscription_id: job.subscriptionId,
    data: Object.assign({ type: job.event.type }, job.event.data, { type: job.event.type }),
  });

/** One attempt at one delivery (attempt 1, 2, ...). */
export async function deliver(rt: Runtime, job: DeliveryJob, attempt: number): Promise<AttemptResult> {
  const cfg = rt.config.eventDelivery;
  const sub = await store.findDeliverable(rt.db, job.subscriptionId);
  if (!sub || !(await ownerSees(rt, sub, job.event))) return { outcome: 'skipped' };

  const body = deliveryBody(job);
  const now = Date.now();
  const secrets = [sub.secret];
  if (sub.previous_secret && sub.previous_secret_until && sub.previous_secret_until.getTime() > now) secrets.push(sub.previous_secret);
  const started = performance.now();
  let statusCode: number | null = null;
  let error: string | null = null;
  let refused = false;
  try {
    // The URL is checked again (the switch may have been turned off since the subscription was made).
    const answer = await rt.outbound.fetch(new URL(sub.url), {
      method: 'POST',
      body,
      owner: sub.user_id,
      allowPrivate: cfg.allowPrivate,
      timeoutMs: cfg.timeoutMs,
      maxBytes: MAX_ANSWER_BYTES,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Axid-Events/1',
        'axid-event-id': job.event.id,
        'axid-delivery-attempt': String(attempt),
        'axid-signature': signatureHeader(secrets, body),
      },
    });
    statusCode = answer.status;
    if (answer.status < 200 || answer.status >= 300) error = `the receiver answered ${answer.status}${answer.status >= 300 && answer.status < 400 ? ' (redirects are not followed)' : ''}`;
  } catch (err) {
    if (!(err instanceof OutboundRefused) && !(err instanceof OutboundFailed)) throw err;
    refused = err instanceof OutboundRefused;
    error = err.message;
  }
  const durationMs = Math.round(performance.now() - started);
  await store.logDelivery(rt.db, {
    subscription_id: sub.id,
    event_id: job.event.id,
    event_type: job.event.type,
    attempt,
    status_code: statusCode,
    error,
    duration_ms: durationMs,
  });
  if (error === null) {
    await store.markSucceeded(rt.db, sub.id);
    return { outcome: 'delivered', durationMs };
  }
  if (refused) return { outcome: 'refused', durationMs };

  const failingSince = await store.markFailed(rt.db, sub.id, new Date(job.event.created_at));
  if (failingSince && Date.now() - failingSince.getTime() >= cfg.retryWindowMs) {
    await disableSubscription(rt, sub.id);
    return { outcome: 'disabled', durationMs };
  }
  if (Date.now() - Date.parse(job.event.created_at) >= cfg.retryWindowMs) return { outcome: 'gave_up', durationMs };
  return { outcome: 'retry', durationMs };
}

/** Disables a subscription and tells its owner's stream (`event_subscription.disabled`), in one transaction. */
async function disableSubscription(rt: Runtime, id: string): Promise<void> {
  await rt.db.transaction(async (trx) => {
    const row = await store.disable(trx, id);
    if (!row) return; // another worker did
    await recordEvents(rt, trx, [
      {
        type: 'event_subscription.disabled',
        to: { scope: 'users', workspace_id: row.workspace_id, user_ids: [row.user_id] },
        data: { subscription: presentSubscription(row) },
      },
    ]);
  });
}

/** The wait before retry n (1, 2, ...): exponential from the base, capped. */
export const retryDelay = (cfg: Runtime['config']['eventDelivery'], retry: number) => Math.min(cfg.retryMaxMs, cfg.retryBaseMs * 2 ** Math.max(0, retry - 1));
