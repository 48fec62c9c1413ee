// Single sign-on with OpenID Connect (contract §12; docs/sso.md), through
// openid-client: discovery, the authorization code flow with PKCE, `state`
// and `nonce`, and the ID token checked by the library (issuer, audience,
// signature, expiry, nonce). The email claim counts only with
// `email_verified: true`. Success ends in a one-time code (60 s) in the
// fragment of a redirect to the web app, exchanged at POST /auth/exchange;
// any failure redirects to `/#sign_in_error=<code>`.
//
// Between the start and the callback the flow's secrets (nonce, PKCE
// verifier) wait in Redis under the state for 10 minutes and are taken once;
// the state is also put in a cookie scoped to these paths, so a callback in
// another browser than the one that started (login CSRF) fails.
import { randomBytes } from 'node:crypto';
import * as client from 'openid-client';
import { AppError, isUniqueViolation } from '../../../shared/errors.js';
import { recordEvents } from '../../../shared/events.js';
import type { Runtime } from '../../../shared/runtime.js';
import { presentUser, type UserRow } from '../users/users.presenter.js';
import { enforceUserLimit } from '../users/users.service.js';
import * as users from '../users/users.store.js';
import { emailIdentity } from '../../../shared/identity.js';
import { findPeopleByEmailKey, signInCode } from './auth.service.js';
import { CODE_TTL } from './codes.store.js';

export const OIDC_COOKIE = 'axid_oidc';
const PENDING_SECONDS = 600;
const CALLBACK_PATH = '/api/v1/auth/oidc/callback';

/** Why a sign-in failed, as the web app reads it from `#sign_in_error=` (services/web/src/lib/sign-in.ts). */
export type SsoFailure =
  | 'sso_not_configured'
  | 'sso_unavailable'
  | 'sso_state'
  | 'sso_failed'
  | 'email_unverified'
  | 'email_unsupported'
  | 'no_account'
  | 'user_limit_reached';

export class SsoError extends Error {
  constructor(readonly code: SsoFailure) {
    super(code);
  }
}

type Claims = Partial<client.UserInfoResponse> & { sub: string };

const configs = new WeakMap<Runtime, Promise<client.Configuration>>();

// Plain http is accepted only for an issuer on this machine (a provider run by the tests, a local Keycloak).
const isLoopback = (url: URL) => ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);

/** The provider's configuration, discovered once per runtime (again after a failure). */
function configOf(rt: Runtime): Promise<client.Configuration> {
  const settings = rt.config.oidc;
  if (!settings) return Promise.reject(new SsoError('sso_not_configured'));
  let config = configs.get(rt);
  if (!config) {
    const issuer = new URL(settings.issuer);
    config = client
      .discovery(issuer, settings.clientId, undefined, client.ClientSecretBasic(settings.clientSecret), {
        timeout: 5,
        execute: issuer.protocol === 'http:' && isLoopback(issuer) ? [client.allowInsecureRequests] : [],
      })
      .catch((err: unknown) => {
        configs.delete(rt);
        rt.log.warn({ err: { name: (err as Error)?.name, code: (err as { code?: string })?.code } }, 'single sign-on: discovery failed');
        throw new SsoError('sso_unavailable');
      });
    configs.set(rt, config);
  }
  return config;
}

const pendingKey = (rt: Runtime, state: string) => `${rt.config.redisKeyPrefix}oidc:${state}`;

/** GET /auth/oidc/start: where to send the browser, and the cookie that binds the flow to it. */
export async function startSignIn(rt: Runtime): Promise<{ location: string; cookie: string }> {
  const config = await configOf(rt);
  const state = client.randomState();
  const nonce = client.randomNonce();
  const verifier = client.randomPKCECodeVerifier();
  await rt.redis.set(pendingKey(rt, state), JSON.stringify({ nonce, verifier }), 'EX', PENDING_SECONDS);
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: `${rt.config.publicBaseUrl}${CALLBACK_PATH}`,
    scope: 'openid email profile',
    response_type: 'code',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  const secure = rt.config.publicBaseUrl.startsWith('https:') ? '; Secure' : '';
  return { location: url.href, cookie: `${OIDC_COOKIE}=${state}; Path=/api/v1/auth/oidc; Max-Age=${PENDING_SECONDS}; HttpOnly; SameSite=Lax${secure}` };
}

/** The cookie that ends the flow (sent with every callback answer). */
export const clearedCookie = `${OIDC_COOKIE}=; Path=/api/v1/auth/oidc; Max-Age=0; HttpOnly; SameSite=Lax`;

/**
 * GET /auth/oidc/callback: checks the answer, finds (or creates) the person
 * and returns the one-time code the web app exchanges. Throws SsoError.
 */
export async function finishSignIn(rt: Runtime, query: string, cookieState: string | undefined): Promise<string> {
  const config = await configOf(rt);
  const state = new URLSearchParams(query).get('state');
  if (!state || !cookieState || state !== cookieState) throw new SsoError('sso_state');
  // Taken once: a replayed callback finds nothing.
  const [[, saved]] = (await rt.redis.multi().get(pendingKey(rt, state)).del(pendingKey(rt, state)).exec()) as [[Error | null, string | null], unknown];
  if (!saved) throw new SsoError('sso_state');
  const { nonce, verifier } = JSON.parse(saved) as { nonce: string; verifier: string };
  let claims: Claims | undefined;
  try {
    const tokens = await client.authorizationCodeGrant(config, new URL(`${rt.config.publicBaseUrl}${CALLBACK_PATH}?${query}`), {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
      idTokenExpected: true,
    });
    const idToken = tokens.claims();
    // Providers that follow the core spec to the letter (Okta, oidc-provider)
    // keep scope claims out of an ID token issued with an access token: then
    // they come from the UserInfo endpoint, checked against the token's subject.
    claims = idToken && typeof idToken.email !== 'string' ? { ...(await client.fetchUserInfo(config, tokens.access_token, idToken.sub)), sub: idToken.sub } : idToken;
  } catch (err) {
    // The library's error names what failed (a used code, a bad signature); never the code itself.
    rt.log.info({ method: 'oidc', outcome: 'sso_failed', err: { name: (err as Error)?.name, code: (err as { code?: string })?.code, error: (err as { error?: string })?.error } }, 'sign-in');
    throw new SsoError('sso_failed');
  }
  if (!claims) throw new SsoError('sso_failed');
  const email = typeof claims.email === 'string' ? claims.email.trim() : '';
  if (!email || claims.email_verified !== true) throw new SsoError('email_unverified');
  // Matched by the one identity key (shared/identity.ts), as sign-in and storage are: a verified
  // address that differs from a person's only by a fold another system reads otherwise is refused, never matched.
  const emailKey = emailIdentity(email);
  if (!emailKey) throw new SsoError('email_unsupported');
  const known = async () => (await findPeopleByEmailKey(rt.db, emailKey))[0];
  let user = await known();
  if (!user && rt.config.oidc!.autoCreate) {
    // Two first sign-ins racing: the second finds the person the first made.
    user = await createMember(rt, email, claims).catch(async (err: unknown) => {
      if (isUniqueViolation(err, 'users_workspace_email')) return known();
      throw err;
    });
  }
  if (!user) throw new SsoError('no_account');
  const { code } = await signInCode(rt.db, user, CODE_TTL.oidc);
  rt.metrics.signIns.inc({ method: 'oidc', outcome: 'ok' });
  rt.log.info({ method: 'oidc', outcome: 'ok', user_id: user.id }, 'sign-in');
  return code;
}

/**
 * OIDC_AUTO_CREATE: a member of the deployment's first workspace (the one
 * bootstrap made), named after the provider's preferred_username or the
 * email's local part (with a suffix when taken).
 */
async function createMember(rt: Runtime, email: string, claims: Claims): Promise<UserRow> {
  const base = (typeof claims.preferred_username === 'string' && claims.preferred_username.trim() ? claims.preferred_username : email.split('@')[0]!).trim().slice(0, 70) || 'member';
  const displayName = typeof claims.name === 'string' && claims.name.trim() ? claims.name.trim().slice(0, 80) : null;
  return rt.db.transaction(async (trx) => {
    const workspace = await trx('workspaces').orderBy('created_at').first('id');
    if (!workspace) throw new SsoError('no_account');
    try {
      await enforceUserLimit(trx, workspace.id);
    } catch (err) {
      if (err instanceof AppError && err.code === 'user_limit_reached') throw new SsoError('user_limit_reached');
      throw err;
    }
    const like = `${base.replace(/[\\%_]/g, '\\$&')}%`;
    // A user group's handle is a taken name too (contract §14; migration 191).
    const taken = [
      ...(await trx('users').where({ workspace_id: workspace.id }).whereNull('deactivated_at').where('name', 'like', like).pluck('name')),
      ...(await trx('user_groups').where({ workspace_id: workspace.id }).where('handle', 'like', like).pluck('handle')),
    ];
    const name = taken.includes(base) ? `${base}-${randomBytes(3).toString('hex')}` : base;
    const user = await users.insertUser(trx, { workspace_id: workspace.id, name, display_name: displayName, avatar_url: null, role: 'member', is_agent: false, email });
    await recordEvents(rt, trx, [{ type: 'user.created', to: { scope: 'workspace', workspace_id: workspace.id }, data: { user: presentUser(user) } }]);
    rt.log.info({ user_id: user.id, method: 'oidc' }, 'member created by single sign-on');
    return user;
  });
}
