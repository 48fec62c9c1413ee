// Signing in without a pasted key (feature level 3, contract §12): email and
// password, an invite link, single sign-on, a one-time sign-in link. Each ends
// in a 30-day key the API makes for this browser, which the client keeps as
// its own (client.adoptKey), as it keeps the one it makes from a pasted key.
// Secrets arrive in the URL fragment, which no server sees, and leave the
// address bar (and so the history) before anything else runs.
import { data } from './api.js';
import type { AxidClient } from './client.js';

/** What the page was opened for, read from the fragment. */
export type Arrival =
  | { kind: 'key'; key: string }
  | { kind: 'code'; code: string }
  | { kind: 'invite'; token: string; email: string }
  | { kind: 'reset'; code: string }
  | { kind: 'error'; code: string }
  | { kind: 'none' };

const FRAGMENT_KINDS = [
  ['key', 'key'],
  ['code', 'code'],
  ['invite', 'invite'],
  ['reset', 'reset'],
  ['sign_in_error', 'error'],
] as const;

export function arrivalFromHash(hash: string): Arrival {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  for (const [param, kind] of FRAGMENT_KINDS) {
    const value = params.get(param)?.trim();
    if (!value) continue;
    if (kind === 'key') return { kind, key: value };
    if (kind === 'invite') return { kind, token: value, email: params.get('email')?.trim() ?? '' };
    return { kind, code: value };
  }
  return { kind: 'none' };
}

/** Why single sign-on failed, in words (the codes of services/core/auth/oidc.ts). */
export function signInErrorText(code: string): string {
  const texts: Record<string, string> = {
    sso_not_configured: 'Single sign-on is not set up on this server.',
    sso_failed: 'Single sign-on did not complete. Try again.',
    sso_state: 'The single sign-on answer did not match this browser’s request. Start again from this page.',
    email_unverified: 'Your identity provider did not confirm your email address, so it cannot sign you in here.',
    email_unsupported: 'Your email address has characters this server cannot compare safely, so it cannot sign you in here. Ask an admin.',
    no_account: 'No account in this workspace has your email address. Ask an admin for an invite.',
    user_limit_reached: 'This workspace has no free seat for a new member. Ask an admin.',
    sso_unavailable: 'The identity provider could not be reached. Try again shortly.',
  };
  return texts[code] ?? 'Signing in did not complete. Try again.';
}

export interface Methods {
  password: boolean;
  oidc: { name: string } | null;
}

/** The ways in this server offers; a level-2 server (no /auth/methods) takes keys only. */
export async function signInMethods(client: AxidClient): Promise<Methods> {
  const { data: body, response } = await client.api.GET('/api/v1/auth/methods');
  if (!response.ok || !body) return { password: false, oidc: null };
  return body.data;
}

export async function signInWithPassword(client: AxidClient, email: string, password: string) {
  const signed = await data(client.api.POST('/api/v1/auth/sign-in', { body: { email: email.trim(), password } }));
  await client.adoptKey(signed.api_key as { key: string; id: string; name: string });
}

/** A one-time code (the single sign-on redirect's, a sign-in link's): works once. */
export async function exchangeCode(client: AxidClient, code: string) {
  const signed = await data(client.api.POST('/api/v1/auth/exchange', { body: { code } }));
  await client.adoptKey(signed.api_key as { key: string; id: string; name: string });
}

export async function acceptInvite(client: AxidClient, body: { token: string; name: string; display_name?: string | null; email: string; password: string }) {
  const signed = await data(client.api.POST('/api/v1/auth/accept-invite', { body }));
  await client.adoptKey(signed.api_key as { key: string; id: string; name: string });
}

export async function resetPassword(client: AxidClient, code: string, password: string) {
  const signed = await data(client.api.POST('/api/v1/auth/reset-password', { body: { code, password } }));
  await client.adoptKey(signed.api_key as { key: string; id: string; name: string });
}

/** The address single sign-on starts at (a full-page navigation: the provider's pages are not ours). */
export const OIDC_START = '/api/v1/auth/oidc/start';

export const MIN_PASSWORD = 12;
