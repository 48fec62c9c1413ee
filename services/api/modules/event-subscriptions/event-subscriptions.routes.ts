import { list, ok } from '../../../../shared/http/envelope.js';
import type { RouteTable } from '../../../../shared/http/route.js';
import { dataOf, listOf } from '../../../../shared/http/responses.js';
import { EventDeliverySchema, EventSubscriptionSchema, IssuedEventSubscriptionSchema } from '../../../core/event-subscriptions/event-subscriptions.presenter.js';
import { AllQuery, CreateSubscriptionBody, EVENT_SUBSCRIPTIONS, ListSubscriptionsQuery, SubscriptionIdParams } from '../../../core/event-subscriptions/event-subscriptions.schemas.js';
import * as subscriptions from '../../../core/event-subscriptions/event-subscriptions.service.js';

const tag = 'Event subscriptions';

/** Events pushed to a bot over HTTP (level 3, contract §11; docs/bots.md). */
export function eventSubscriptionRoutes(routes: RouteTable) {
  routes
    .add(
      {
        method: 'post',
        path: '/event-subscriptions',
        scope: 'events',
        ...EVENT_SUBSCRIPTIONS,
        summary: 'Subscribe an https:// address to the events your stream receives; the secret is in this response only',
        description:
          'Before answering, the service POSTs `{"type": "url_verification", "challenge": "<random>"}` to the URL and expects, within 5 s, a 2xx whose body is the challenge (plain text or `{"challenge": ...}`); otherwise 400. Private and loopback addresses are refused. At most 5 per user (409).',
        tag,
        body: CreateSubscriptionBody,
        status: 201,
        response: dataOf(IssuedEventSubscriptionSchema),
        errors: ['conflict'],
      },
      async ({ rt, actor, body }) => ok(await subscriptions.createSubscription(rt, actor, body)),
    )
    .add(
      {
        method: 'get',
        path: '/event-subscriptions',
        scope: 'events',
        ...EVENT_SUBSCRIPTIONS,
        summary: 'List your event subscriptions (admins: every one of the workspace with all=true)',
        tag,
        query: ListSubscriptionsQuery,
        response: listOf(EventSubscriptionSchema),
        errors: ['forbidden'],
      },
      async ({ rt, actor, query }) => list(await subscriptions.listSubscriptions(rt, actor, query)),
    )
    .add(
      { method: 'get', path: '/event-subscriptions/{subscription_id}', scope: 'events', ...EVENT_SUBSCRIPTIONS, summary: 'Get an event subscription', tag, params: SubscriptionIdParams, query: AllQuery, response: dataOf(EventSubscriptionSchema) },
      async ({ rt, actor, params, query }) => ok(await subscriptions.getSubscription(rt, actor, params.subscription_id, query.all)),
    )
    .add(
      { method: 'delete', path: '/event-subscriptions/{subscription_id}', scope: 'events', ...EVENT_SUBSCRIPTIONS, summary: 'Delete an event subscription (admins: anyone\'s, with all=true)', tag, params: SubscriptionIdParams, query: AllQuery },
      async ({ rt, actor, params, query }) => {
        await subscriptions.deleteSubscription(rt, actor, params.subscription_id, query.all);
      },
    )
    .add(
      {
        method: 'post',
        path: '/event-subscriptions/{subscription_id}/rotate-secret',
        scope: 'events',
        ...EVENT_SUBSCRIPTIONS,
        summary: 'Issue a new signing secret; the old one keeps signing beside it for 24 h',
        tag,
        params: SubscriptionIdParams,
        response: dataOf(IssuedEventSubscriptionSchema),
      },
      async ({ rt, actor, params }) => ok(await subscriptions.rotateSecret(rt, actor, params.subscription_id)),
    )
    .add(
      {
        method: 'get',
        path: '/event-subscriptions/{subscription_id}/deliveries',
        scope: 'events',
        ...EVENT_SUBSCRIPTIONS,
        summary: 'The last 100 delivery attempts, newest first',
        tag,
        params: SubscriptionIdParams,
        query: AllQuery,
        response: listOf(EventDeliverySchema),
      },
      async ({ rt, actor, params, query }) => list({ items: await subscriptions.listDeliveries(rt, actor, params.subscription_id, query.all), nextCursor: null }),
    );
}
