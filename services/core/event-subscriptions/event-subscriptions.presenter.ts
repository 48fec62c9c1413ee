import { z } from 'zod';
import { Timestamp, named } from '../../../shared/http/responses.js';

export interface SubscriptionRow {
  id: string;
  seq: number;
  workspace_id: string;
  user_id: string;
  url: string;
  events: string[];
  status: 'active' | 'disabled';
  secret: string;
  previous_secret: string | null;
  previous_secret_until: Date | null;
  failing_since: Date | null;
  created_at: Date;
  /** The conversations of the key that made it (shared/scopes.ts): only their events are delivered; null: all the owner's. */
  conversation_ids: string[] | null;
}

export interface DeliveryRow {
  id: number;
  subscription_id: string;
  event_id: string;
  event_type: string;
  attempt: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  delivered_at: Date;
}

const fields = {
  id: z.string(),
  url: z.string(),
  events: z.array(z.string()).describe('The event types delivered'),
  user_id: z.string().describe('The owner: deliveries carry what their stream would receive'),
  status: z.enum(['active', 'disabled']).describe('`disabled` after 24 h without a successful delivery'),
  created_at: Timestamp,
};

/** An event subscription as listed: never its secret. */
export const EventSubscriptionSchema = named('EventSubscription', z.strictObject(fields));

/** On creation and rotation only: the signing secret. */
export const IssuedEventSubscriptionSchema = named(
  'IssuedEventSubscription',
  z.strictObject({ ...fields, secret: z.string().describe('`axsec_` and 43 base62 characters; shown only here') }),
);

export const EventDeliverySchema = named(
  'EventDelivery',
  z.strictObject({
    event_id: z.string(),
    event_type: z.string(),
    attempt: z.number().int(),
    status_code: z.number().int().nullable().describe('The receiver\'s status; null when none came (timeout, refused connection, refused address)'),
    error: z.string().nullable(),
    duration_ms: z.number().int(),
    delivered_at: Timestamp,
  }),
);

export const presentSubscription = (row: SubscriptionRow): z.infer<typeof EventSubscriptionSchema> => ({
  id: row.id,
  url: row.url,
  events: row.events,
  user_id: row.user_id,
  status: row.status,
  created_at: row.created_at,
});

export const presentIssuedSubscription = (row: SubscriptionRow): z.infer<typeof IssuedEventSubscriptionSchema> => ({
  ...presentSubscription(row),
  secret: row.secret,
});

export const presentDelivery = (row: DeliveryRow): z.infer<typeof EventDeliverySchema> => ({
  event_id: row.event_id,
  event_type: row.event_type,
  attempt: row.attempt,
  status_code: row.status_code,
  error: row.error,
  duration_ms: row.duration_ms,
  delivered_at: row.delivered_at,
});
