import { ok } from '../../../../shared/http/envelope.js';
import type { RouteTable } from '../../../../shared/http/route.js';
import { dataOf } from '../../../../shared/http/responses.js';
import {
  AcceptInviteBody,
  ExchangeBody,
  OneTimeLinkSchema,
  ResetPasswordBody,
  SignInBody,
  SignInMethodsSchema,
  SignedInSchema,
} from '../../../core/auth/auth.schemas.js';
import * as auth from '../../../core/auth/auth.service.js';
import { acceptInvite } from '../../../core/invites/invites.service.js';

// Signing in without a pasted key (contract §12, level 3). Secrets (passwords,
// invite tokens, one-time codes) travel in POST bodies only, never in a path
// or query a server log could keep.
export function authRoutes(routes: RouteTable) {
  const tag = 'Sign-in';
  routes
    .add(
      { method: 'get', path: '/auth/methods', summary: 'Which ways to sign in are on', tag, auth: 'none', response: dataOf(SignInMethodsSchema), since: 3 },
      ({ rt }) => ok({ password: true, oidc: rt.config.oidc ? { name: rt.config.oidc.name } : null }),
    )
    .add(
      {
        method: 'post',
        path: '/auth/sign-in',
        summary: 'Sign in with an email and a password; answers a new 30-day key',
        description:
          'Needs no key. Answers 200 with `{data: SignedIn}`. A wrong email or password: 401 `invalid_credentials`, after the same work either way. More than 10 failures for one email or one client address in 15 minutes: 429 with the rate-limit headers.',
        tag,
        auth: 'none',
        body: SignInBody,
        response: dataOf(SignedInSchema),
        errors: ['invalid_credentials'],
        since: 3,
      },
      async ({ rt, body, ctx }) => ok(await auth.signIn(rt, body, ctx.ip)),
    )
    .add(
      {
        method: 'post',
        path: '/auth/accept-invite',
        summary: "Accept an invite: creates the person with the invite's role and signs them in",
        tag,
        auth: 'none',
        body: AcceptInviteBody,
        status: 201,
        response: dataOf(SignedInSchema),
        errors: ['invite_invalid', 'user_limit_reached', 'name_taken', 'conflict'],
        since: 3,
      },
      async ({ rt, body }) => ok(await acceptInvite(rt, body)),
    )
    .add(
      {
        method: 'post',
        path: '/auth/exchange',
        summary: 'Exchange a one-time code (single sign-on redirect, sign-in link) for a new 30-day key',
        tag,
        auth: 'none',
        body: ExchangeBody,
        response: dataOf(SignedInSchema),
        errors: ['invalid_credentials'],
        since: 3,
      },
      async ({ rt, body }) => ok(await auth.exchangeCode(rt, body.code)),
    )
    .add(
      {
        method: 'post',
        path: '/auth/links',
        summary: "A link that signs the key's holder in once, in another browser, without the key in it",
        description:
          'Needs an API key. Answers 201 with `{data: OneTimeLink}`: `<PUBLIC_BASE_URL>/#code=<code>`. The web app that opens it exchanges the code (`POST /auth/exchange`) for a key of its own; the code works once and dies after 10 minutes.',
        tag,
        status: 201,
        response: dataOf(OneTimeLinkSchema),
        since: 3,
      },
      async ({ rt, actor }) => ok(await auth.createSignInLink(rt, actor)),
    )
    .add(
      {
        method: 'post',
        path: '/auth/reset-password',
        summary: "Set a new password with a reset link's code; every web key of the person ends",
        tag,
        auth: 'none',
        body: ResetPasswordBody,
        response: dataOf(SignedInSchema),
        errors: ['invalid_credentials'],
        since: 3,
      },
      async ({ rt, body }) => ok(await auth.resetPassword(rt, body)),
    );
}
