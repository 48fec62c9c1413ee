// Test helpers for the remote MCP endpoint (docs/mcp.md): a level-3 stack
// whose PUBLIC_BASE_URL is its real address (the OAuth issuer and resource
// are built from it), the SDK's own client over Streamable HTTP, and the
// OAuth steps a client takes (registration, PKCE, token).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createHash, randomBytes } from 'node:crypto';
import { separateStack } from './separate-stack.js';
import { closedPort } from './mcp.js';
import { serverLevels } from './client.js';

/** A level-3 stack of its own, listening where its PUBLIC_BASE_URL says. */
export async function mcpStack(overrides: Record<string, string> = {}) {
  for (let attempt = 0; ; attempt++) {
    const port = await closedPort();
    try {
      const started = await separateStack({ FEATURE_LEVEL: '3', PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, ...overrides });
      serverLevels.set(started.stack.url, '3');
      return {
        ...started,
        async stop() {
          serverLevels.delete(started.stack.url);
          await started.stop();
        },
      };
    } catch (error) {
      // Another process took the port between the probe and the listen.
      if (attempt < 3 && (error as NodeJS.ErrnoException).code === 'EADDRINUSE') continue;
      throw error;
    }
  }
}

/** The SDK's client, connected to `<base>/mcp` with a Bearer key (and `fetch`, to route its requests). */
export async function connectMcp(baseUrl: string, key: string, fetchVia?: typeof fetch): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', baseUrl), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
    ...(fetchVia ? { fetch: fetchVia } : {}),
  });
  const client = new Client({ name: 'axid-remote-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** A tool's structured result, or throws with its error text. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function callOk(client: Client, name: string, args: Record<string, unknown>): Promise<any> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
  return result.structuredContent;
}

/** A tool's error object {code, message, hint}, or throws when it succeeded. */
export async function callError(client: Client, name: string, args: Record<string, unknown>): Promise<{ code: string; message: string; hint: string }> {
  const result = await client.callTool({ name, arguments: args });
  if (!result.isError) throw new Error(`${name} succeeded: ${JSON.stringify(result.structuredContent)}`);
  const first = (result.content as { type: string; text: string }[])[0]!;
  return JSON.parse(first.text).error;
}

export const REDIRECT_URI = 'http://127.0.0.1:9/callback';

/** POST /register: a public client with one redirect URI. */
export async function registerClient(baseUrl: string, redirectUris = [REDIRECT_URI], name = 'Test Agent'): Promise<{ client_id: string; client_name: string }> {
  const res = await fetch(new URL('/register', baseUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: name, redirect_uris: redirectUris, grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' }),
  });
  if (res.status !== 201) throw new Error(`registration failed: ${res.status} ${await res.text()}`);
  return res.json() as Promise<{ client_id: string; client_name: string }>;
}

export interface Pkce {
  code_verifier: string;
  code_challenge: string;
}

/** A PKCE pair (RFC 7636, S256). */
export function newPkce(): Pkce {
  const code_verifier = randomBytes(32).toString('base64url');
  return { code_verifier, code_challenge: createHash('sha256').update(code_verifier).digest('base64url') };
}

/** GET /authorize without following the redirect: the answer's Location. */
export async function authorize(baseUrl: string, clientId: string, pkce: Pkce, o: { scope?: string; redirectUri?: string; state?: string; resource?: string } = {}) {
  const url = new URL('/authorize', baseUrl);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: o.redirectUri ?? REDIRECT_URI,
    code_challenge: pkce.code_challenge,
    code_challenge_method: 'S256',
    state: o.state ?? 'st-1',
    resource: o.resource ?? new URL('/mcp', baseUrl).href,
    ...(o.scope ? { scope: o.scope } : {}),
  }).toString();
  const res = await fetch(url, { redirect: 'manual' });
  return { status: res.status, location: res.headers.get('location'), body: res.status === 302 ? null : await res.text() };
}

/** POST /token with a form body; the parsed JSON answer and its status. */
export async function token(baseUrl: string, form: Record<string, string>) {
  const res = await fetch(new URL('/token', baseUrl), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString() });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return { status: res.status, body: (await res.json()) as any };
}
