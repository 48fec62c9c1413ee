import { z } from 'zod';
import type { ErrorCode } from '../../../../shared/errors.js';
import { list, ok } from '../../../../shared/http/envelope.js';
import type { RouteTable } from '../../../../shared/http/route.js';
import { dataOf, listOf } from '../../../../shared/http/responses.js';
import { MessageSchema } from '../../../core/messages/messages.presenter.js';
import { WebhookSchema } from '../../../core/webhooks/webhooks.presenter.js';
import { CreateWebhookBody, ListWebhooksQuery, NativePostBody, NativePostBodyWithThread, WebhookIdParams } from '../../../core/webhooks/webhooks.schemas.js';
import * as webhooks from '../../../core/webhooks/webhooks.service.js';

const tag = 'Webhooks';

/** Managing incoming webhooks, under /api/v1 with an API key. */
export function webhookRoutes(routes: RouteTable) {
  routes
    .add({ method: 'get', path: '/webhooks/incoming', scope: 'read', summary: 'List incoming webhooks (admins: all; others: their own)', tag, query: ListWebhooksQuery, response: listOf(WebhookSchema) }, async ({ rt, actor, query }) =>
      list(await webhooks.listWebhooks(rt, actor, query)),
    )
    .add(
      { method: 'post', path: '/webhooks/incoming', scope: 'channels:write', summary: 'Create an incoming webhook for a channel you can read', tag, body: CreateWebhookBody, status: 201, response: dataOf(WebhookSchema), errors: ['channel_not_found', 'channel_archived'] },
      async ({ rt, actor, body }) => ok(await webhooks.createWebhook(rt, actor, body)),
    )
    .add(
      { method: 'delete', path: '/webhooks/incoming/{webhook_id}', scope: 'channels:write', summary: 'Delete an incoming webhook (its creator, an admin or the owner)', tag, params: WebhookIdParams, errors: ['forbidden'] },
      async ({ rt, actor, params }) => {
        await webhooks.deleteWebhook(rt, actor, params.webhook_id);
      },
    );
}

/** Posting, under {base_url}/hooks/ with no key: the address is the credential. */
export function hookRoutes(routes: RouteTable) {
  const native = {
    method: 'post',
    path: '/hooks/{webhook_id}',
    scope: 'public',
    summary: 'Post {content, metadata?} as a message in the webhook channel',
    description: 'Needs no key: the address is the credential. Answers 201 with `{data: Message}`, the message as posted.',
    tag,
    auth: 'none',
    params: WebhookIdParams,
    status: 201,
    response: dataOf(MessageSchema),
    errors: ['channel_not_found', 'channel_archived'] as ErrorCode[],
  } as const;
  routes
    .add({ ...native, until: 2, body: NativePostBody }, async ({ rt, params, body }) => ok(await webhooks.postNative(rt, params.webhook_id, body)))
    // Level 3 (contract §11): `thread_id` replies in a thread of the hook's channel.
    .add(
      {
        ...native,
        since: 3,
        summary: 'Post {content, metadata?, thread_id?} as a message in the webhook channel',
        description: `${native.description} \`thread_id\` (the id of a top-level message of the hook's channel, e.g. from an earlier 201) posts a reply in that thread.`,
        body: NativePostBodyWithThread,
        idempotent: 'webhook',
        checkCaller: ({ rt, params }) => webhooks.checkPostingHook(rt, params.webhook_id),
      },
      async ({ rt, params, body }) => ok(await webhooks.postNative(rt, params.webhook_id, body)),
    )
    .add(
      {
        method: 'post',
        path: '/hooks/compat/{webhook_id}',
        scope: 'public',
        summary: 'Post in the chat-platform-compatible format (JSON, or a form field payload=<json>); answers "ok"',
        description: 'Needs no key: the address is the credential. Answers 200 with the text `ok`, as chat-platform senders expect; attachments are rendered by the worker afterwards.',
        tag,
        auth: 'none',
        params: WebhookIdParams,
        body: z.unknown(),
        form: true,
        produces: ['text/plain'],
        errors: ['channel_not_found', 'channel_archived'],
      },
      async ({ rt, params, body }) => {
        await webhooks.postCompat(rt, params.webhook_id, body);
        return 'ok';
      },
    );
}
