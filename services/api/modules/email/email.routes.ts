import { z } from 'zod';
import { ok } from '../../../../shared/http/envelope.js';
import type { RouteTable } from '../../../../shared/http/route.js';
import { dataOf } from '../../../../shared/http/responses.js';
import { unsubscribe } from '../../../core/email/email.notify.js';

const TokenQuery = z.object({ token: z.string().max(200).optional() });

export function emailRoutes(routes: RouteTable) {
  const tag = 'Users and agents';
  routes.add(
    {
      method: 'post',
      path: '/email/unsubscribe',
      summary: "One-click unsubscribe (RFC 8058: the emails' List-Unsubscribe address, POSTed by the mail client): the person's email_notifications become \"never\"",
      tag,
      since: 3,
      auth: 'none',
      scope: 'public',
      query: TokenQuery,
      // `List-Unsubscribe=One-Click` as a form, or nothing: the token in the address is what counts.
      body: z.unknown(),
      rawBody: true,
      response: dataOf(z.strictObject({ email_notifications: z.literal('never') })),
      errors: ['forbidden'],
    },
    async ({ rt, query }) => {
      await unsubscribe(rt, query.token);
      return ok({ email_notifications: 'never' as const });
    },
  );
}
