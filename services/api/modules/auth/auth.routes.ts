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
import { OIDC_COOKIE, SsoError, clearedCookie, finishSignIn, startSignIn } from '../../../core/auth/oidc.js';
import { acceptInvite } from '../../../core/invites/invites.service.js';
import { Reply, originOf } from '../../../../shared/http/route.js';
import type { AppContext } from '../../../../shared/http/context.js';

/** A redirect answer: 302 with its Location, a short text body. */
function redirect(ctx: AppContext, location: string, cookie: string) {
  ctx.set('Location', location);
  ctx.set('Set-Cookie', cookie);
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.type = 'text/plain; charset=utf-8';
  return new Reply(302, 'Redirecting');
}

/** Single sign-on never answers an error page: the web app shows `#sign_in_error=<code>`. */
async function orSignInError(ctx: AppContext, run: () => Promise<{ location: string; cookie: string }>) {
  try {
    const { location, cookie } = await run();
    return redirect(ctx, location, cookie);
  } catch (err) {
    if (!(err instanceof SsoError)) ctx.state.rt.log.error({ err: { name: (err as Error)?.name, message: (err as Error)?.message } }, 'single sign-on failed');
    ctx.state.rt.metrics.signIns.inc({ method: 'oidc', outcome: err instanceof SsoError ? err.code : 'error' });
    return redirect(ctx, `/#sign_in_error=${err instanceof SsoError ? err.code : 'sso_failed'}`, clearedCookie);
  }
}

// Signing in without a pasted key (contract §12, level 3). Secrets (passwords,
// invite tokens, one-time codes) travel in POST bodies only, never in a path
// or query a server log could keep.
export function authRoutes(routes: RouteTable) {
  const tag = 'Sign-in';
  routes
    .add(
      { method: 'get', path: '/auth/methods', scope: 'public', summary: 'Which ways to sign in are on', tag, auth: 'none', response: dataOf(SignInMethodsSchema), since: 3 },
      ({ rt }) => ok({ password: true, oidc: rt.config.oidc ? { name: rt.config.oidc.name } : null }),
    )
    .add(
      {
        method: 'post',
        path: '/auth/sign-in',
        scope: 'public',
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
      async ({ rt, body, ctx }) => ok(await auth.signIn(rt, body, ctx.ip, originOf(ctx))),
    )
    .add(
      {
        method: 'post',
        path: '/auth/accept-invite',
        scope: 'public',
        summary: "Accept an invite: creates the person with the invite's role and signs them in",
        tag,
        auth: 'none',
        body: AcceptInviteBody,
        status: 201,
        response: dataOf(SignedInSchema),
        description:
          "Needs no key. Answers 201 with `{data: SignedIn}`. An unknown, used, revoked or expired token: 400 `invite_invalid`. An invite whose maker was since removed, or may no longer grant its role (demoted): 403 `forbidden` (docs/security.md, \"Derived credentials\").",
        errors: ['invite_invalid', 'forbidden', 'user_limit_reached', 'name_taken', 'conflict'],
        since: 3,
      },
      async ({ rt, body, ctx }) => ok(await acceptInvite(rt, body, originOf(ctx))),
    )
    .add(
      {
        method: 'post',
        path: '/auth/exchange',
        scope: 'public',
        summary: 'Exchange a one-time code (single sign-on redirect, sign-in link) for a new 30-day key',
        tag,
        auth: 'none',
        body: ExchangeBody,
        response: dataOf(SignedInSchema),
        errors: ['invalid_credentials'],
        since: 3,
      },
      async ({ rt, body, ctx }) => ok(await auth.exchangeCode(rt, body.code, originOf(ctx))),
    )
    .add(
      {
        method: 'post',
        path: '/auth/links',
        scope: 'any_key',
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
        scope: 'public',
        summary: "Set a new password with a reset link's code; every web key of the person ends",
        tag,
        auth: 'none',
        body: ResetPasswordBody,
        response: dataOf(SignedInSchema),
        errors: ['invalid_credentials'],
        since: 3,
      },
      async ({ rt, body, ctx }) => ok(await auth.resetPassword(rt, body, originOf(ctx))),
    )
    .add(
      {
        method: 'get',
        path: '/auth/oidc/start',
        scope: 'public',
        summary: 'Start single sign-on: redirects to the identity provider',
        description:
          'Needs no key. Answers 302 to the OpenID Connect provider (authorization code with PKCE, `state` and `nonce`), or to `/#sign_in_error=<code>` when single sign-on is off or the provider cannot be reached.',
        tag,
        auth: 'none',
        status: 302,
        produces: ['text/plain'],
        since: 3,
      },
      ({ ctx }) => orSignInError(ctx, () => startSignIn(ctx.state.rt)),
    )
    .add(
      {
        method: 'get',
        path: '/auth/oidc/callback',
        scope: 'public',
        summary: "The identity provider's redirect back: signs the person in",
        description:
          "Needs no key. Answers 302 to `/#code=<one-time code>` (exchange it with `POST /auth/exchange` within 60 s) or to `/#sign_in_error=<code>`: `sso_state` (this browser did not start the flow, or it was used), `sso_failed`, `email_unverified`, `email_unsupported` (an address that cannot be compared safely: docs/security.md, \"One identity\"), `no_account`, `user_limit_reached`, `sso_unavailable`, `sso_not_configured`.",
        tag,
        auth: 'none',
        status: 302,
        produces: ['text/plain'],
        since: 3,
      },
      ({ ctx }) =>
        orSignInError(ctx, async () => ({
          location: `/#code=${await finishSignIn(ctx.state.rt, ctx.querystring, ctx.cookies.get(OIDC_COOKIE))}`,
          cookie: clearedCookie,
        })),
    );
}
