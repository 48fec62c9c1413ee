import { z } from 'zod';
import { EVENT_TYPES } from '../../../shared/events.js';
import type { LevelSpan } from '../../../shared/feature-level.js';
import { PageQuery } from '../../../shared/http/envelope.js';

/** Events pushed to a bot over HTTP: the routes, and the worker's deliveries (contract §11). */
export const EVENT_SUBSCRIPTIONS: LevelSpan = { since: 3 };

/**
 * What a subscription gets when it names no types: every event its owner's
 * stream gets, typing left out (contract §11), and agent.status with it: both
 * are hints for a screen, stale by the time a retry delivers them.
 */
export const DEFAULT_EVENT_TYPES = EVENT_TYPES.filter((t) => t !== 'typing' && t !== 'agent.status');

export const EventType = z.enum(EVENT_TYPES);

export const CreateSubscriptionBody = z.strictObject({
  url: z.string().min(1).max(2048),
  events: z
    .array(EventType)
    .min(1)
    .max(EVENT_TYPES.length)
    .refine((types) => new Set(types).size === types.length, 'must not name a type twice')
    .optional(),
});
export type CreateSubscriptionInput = z.infer<typeof CreateSubscriptionBody>;

export const SubscriptionIdParams = z.object({ subscription_id: z.string() });

/** `?all=true`: an admin (or the owner) acts on every subscription of the workspace. */
const All = z
  .enum(['true', 'false'])
  .transform((v) => v === 'true')
  .optional();

export const ListSubscriptionsQuery = PageQuery.extend({ all: All });
export const AllQuery = z.object({ all: All });
