// A real OpenID Connect provider for the single sign-on tests: the
// `oidc-provider` package on a spare loopback port, with one client and a few
// people. Its development login page takes any login (the account id) and any
// password; consent is granted at once, as a company's provider does for its
// own applications.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

export interface TestPerson {
  email: string;
  email_verified: boolean;
  name?: string;
  preferred_username?: string;
}

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  people: Map<string, TestPerson>;
  close(): Promise<void>;
}

/** A free loopback port (taken by the caller right after). */
export async function sparePort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function startTestProvider(redirectUris: string[]): Promise<TestProvider> {
  const port = await sparePort();
  const issuer = `http://127.0.0.1:${port}`;
  const people = new Map<string, TestPerson>();
  const clientId = 'axid-test';
  const clientSecret = 'a-client-secret-for-tests-only';
  const provider = new Provider(issuer, {
    clients: [{ client_id: clientId, client_secret: clientSecret, redirect_uris: redirectUris, grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_basic' }],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'preferred_username'] },
    cookies: { keys: ['test-cookie-key'] },
    pkce: { required: () => true },
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub, ...(people.get(sub) ?? { email: `${sub}@nowhere.test`, email_verified: false }) }) }),
    // First-party: no consent screen.
    loadExistingGrant: async (ctx) => {
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId! });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
  });
  // Silence the provider's own warnings about development keys and interactions.
  provider.on('server_error', () => undefined);
  const server = http.createServer(provider.callback());
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    issuer,
    clientId,
    clientSecret,
    people,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The code flow without a browser: starts at `axidUrl`, logs in at the
 * provider's development login page as `login` (with a cookie jar for each
 * side, as a browser keeps them), and follows the redirects to Axid's
 * callback. Resolves the callback's Location (`/#code=…` or
 * `/#sign_in_error=…`).
 */
export async function signInWithoutBrowser(axidUrl: string, login: string): Promise<string> {
  const jars = new Map<string, Map<string, string>>();
  const jarOf = (url: URL) => {
    let jar = jars.get(url.origin);
    if (!jar) jars.set(url.origin, (jar = new Map()));
    return jar;
  };
  const request = async (url: URL, init: RequestInit = {}) => {
    const jar = jarOf(url);
    const res = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers as Record<string, string>), cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const i = pair!.indexOf('=');
      jar.set(pair!.slice(0, i), pair!.slice(i + 1));
    }
    return res;
  };
  let url = new URL('/api/v1/auth/oidc/start', axidUrl);
  let res = await request(url);
  for (let hop = 0; hop < 20; hop++) {
    const location = res.headers.get('location');
    if (url.pathname === '/api/v1/auth/oidc/callback') return location ?? '';
    if (res.status === 200 && url.pathname.startsWith('/interaction/')) {
      const body = new URLSearchParams({ prompt: 'login', login, password: 'anything' });
      res = await request(url, { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      continue;
    }
    if (!location) throw new Error(`the flow stopped at ${url.pathname} with ${res.status}`);
    url = new URL(location, url);
    res = await request(url);
  }
  throw new Error('too many redirects');
}
