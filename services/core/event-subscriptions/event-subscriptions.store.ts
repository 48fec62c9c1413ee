import type { Db } from '../../../shared/db/knex.js';
import { isUuid } from '../../../shared/ids.js';
import type { DeliveryRow, SubscriptionRow } from './event-subscriptions.presenter.js';

/** The delivery log keeps this many attempts per subscription (contract §11). */
export const DELIVERY_LOG_SIZE = 100;

export const insertSubscription = async (db: Db, row: Pick<SubscriptionRow, 'workspace_id' | 'user_id' | 'url' | 'events' | 'secret' | 'conversation_ids'>) => {
  const [created] = await db<SubscriptionRow>('event_subscriptions').insert(row).returning('*');
  return created as SubscriptionRow;
};

export const findSubscription = async (db: Db, workspaceId: string, id: string): Promise<SubscriptionRow | undefined> =>
  isUuid(id) ? db<SubscriptionRow>('event_subscriptions').where({ id, workspace_id: workspaceId }).first() : undefined;

/** Locks the user's row, so that two creations at once count each other (the five-per-user rule). */
export async function countOfUserLocked(db: Db, userId: string): Promise<number> {
  await db('users').where({ id: userId }).forUpdate().first('id');
  const row = await db('event_subscriptions').where({ user_id: userId }).count<{ n: string }>('* as n').first();
  return Number(row?.n ?? 0);
}

export const countOfUser = async (db: Db, userId: string): Promise<number> =>
  Number((await db('event_subscriptions').where({ user_id: userId }).count<{ n: string }>('* as n').first())?.n ?? 0);

export const listSubscriptions = (db: Db, workspaceId: string, o: { userId?: string; after?: number; limit: number }) =>
  db<SubscriptionRow>('event_subscriptions')
    .where({ workspace_id: workspaceId })
    .modify((q) => {
      if (o.userId !== undefined) q.where('user_id', o.userId);
      if (o.after !== undefined) q.where('seq', '>', o.after);
    })
    .orderBy('seq')
    .limit(o.limit + 1);

export const deleteSubscription = (db: Db, id: string) => db('event_subscriptions').where({ id }).delete();

export const rotateSecret = async (db: Db, id: string, secret: string, previousUntil: Date) => {
  const [row] = await db<SubscriptionRow>('event_subscriptions')
    .where({ id })
    .update({ secret, previous_secret: db.ref('secret') as unknown as string, previous_secret_until: previousUntil })
    .returning('*');
  return row as SubscriptionRow | undefined;
};

/** The newest attempts first. */
export const listDeliveries = (db: Db, subscriptionId: string) =>
  db<DeliveryRow>('event_deliveries').where({ subscription_id: subscriptionId }).orderBy('id', 'desc').limit(DELIVERY_LOG_SIZE) as Promise<DeliveryRow[]>;

// Delivery (event-subscriptions.jobs.ts and the dispatcher).

/** The active subscriptions of these workspaces (event_subscriptions_workspace_active). */
export const activeSubscriptionsOf = (db: Db, workspaceIds: string[]) =>
  db<SubscriptionRow>('event_subscriptions')
    .whereIn('workspace_id', workspaceIds)
    .where({ status: 'active' })
    .select('id', 'workspace_id', 'user_id', 'events', 'conversation_ids') as Promise<
    Pick<SubscriptionRow, 'id' | 'workspace_id' | 'user_id' | 'events' | 'conversation_ids'>[]
  >;

/** A subscription to deliver to: active, its owner still in the workspace. */
export const findDeliverable = async (db: Db, id: string): Promise<SubscriptionRow | undefined> =>
  db('event_subscriptions as s')
    .join('users as u', 'u.id', 's.user_id')
    .where({ 's.id': id, 's.status': 'active' })
    .whereNull('u.deactivated_at')
    .first('s.*');

/** Logs an attempt and drops the ones past the newest DELIVERY_LOG_SIZE, in one statement. */
export async function logDelivery(db: Db, row: Omit<DeliveryRow, 'id' | 'delivered_at'>): Promise<void> {
  await db.raw(
    `WITH added AS (INSERT INTO event_deliveries (subscription_id, event_id, event_type, attempt, status_code, error, duration_ms)
                    VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id)
     DELETE FROM event_deliveries WHERE subscription_id = ? AND id <= (
       SELECT id FROM event_deliveries WHERE subscription_id = ? ORDER BY id DESC OFFSET ? LIMIT 1)`,
    [row.subscription_id, row.event_id, row.event_type, row.attempt, row.status_code, row.error, row.duration_ms, row.subscription_id, row.subscription_id, DELIVERY_LOG_SIZE - 1],
  );
}

/** A success ends a run of failures (written only when there was one). */
export const markSucceeded = (db: Db, id: string) => db('event_subscriptions').where({ id }).whereNotNull('failing_since').update({ failing_since: null });

/**
 * Notes a failed delivery of an event created at `eventAt`; returns since when
 * the subscription has been failing: since the oldest event it failed to
 * deliver after its last success, so an event failing for the whole window
 * always finds the subscription failing that long too.
 */
export async function markFailed(db: Db, id: string, eventAt: Date): Promise<Date | undefined> {
  const [row] = await db('event_subscriptions')
    .where({ id })
    .update({ failing_since: db.raw('coalesce(failing_since, ?::timestamptz)', [eventAt]) })
    .returning('failing_since');
  return (row as { failing_since: Date } | undefined)?.failing_since;
}

/** Disables an active subscription; returns it when this call did. */
export async function disable(db: Db, id: string): Promise<SubscriptionRow | undefined> {
  const [row] = await db<SubscriptionRow>('event_subscriptions').where({ id, status: 'active' }).update({ status: 'disabled' }).returning('*');
  return row as SubscriptionRow | undefined;
}
