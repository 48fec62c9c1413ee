// OAuth for MCP clients in the browser (contract §15; docs/mcp.md): the SDK's
// own client finds everything from the address alone (protected resource and
// authorization server metadata, dynamic registration, PKCE), the person
// consents on the web app's screen, the client gets its token and calls a
// tool; revoking the key in Settings → API keys ends it. The consent screen
// passes axe at desktop and phone width.
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import type { Stack } from '../../services/stack.js';
import { mcpStack, REDIRECT_URI } from '../support/mcp-remote.js';
import { newWorkspace, uniqueName } from '../support/stack.js';
import { axeProblems, screenshot, signedIn, suiteBrowser } from './browser.js';

/** An MCP client's OAuth state, in memory, as a desktop client keeps it; the authorization URL is handed to the test's browser. */
class TestClientAuth implements OAuthClientProvider {
  authorizationUrl: URL | null = null;
  private client: OAuthClientInformationMixed | undefined;
  private saved: OAuthTokens | undefined;
  private verifier = '';
  get redirectUrl() {
    return REDIRECT_URI;
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: 'Test Agent', redirect_uris: [REDIRECT_URI], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  state() {
    return 'client-state';
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

describe('OAuth consent for MCP clients (web, level 3)', function () {
  this.timeout(120_000);
  const b = suiteBrowser();
  let s: Stack;
  let stop: () => Promise<void>;
  before(async () => {
    const started = await mcpStack();
    s = started.stack;
    stop = started.stop;
  });
  after(async () => stop());

  /** The MCP client's first connection: refused, it registers and hands over an authorization URL. */
  async function startClient(auth: TestClientAuth) {
    const transport = new StreamableHTTPClientTransport(new URL('/mcp', s.url), { authProvider: auth });
    const client = new McpClient({ name: 'axid-oauth-test', version: '1.0.0' });
    await client.connect(transport).then(
      () => expect.fail('connected without a token'),
      (err: Error) => expect(err.constructor.name, err.message).to.equal('UnauthorizedError'),
    );
    expect(auth.authorizationUrl, 'the client was sent to authorize').to.not.equal(null);
    expect(auth.authorizationUrl!.origin + auth.authorizationUrl!.pathname).to.equal(`${s.url}/authorize`);
    expect(auth.authorizationUrl!.searchParams.get('code_challenge_method')).to.equal('S256');
    return transport;
  }

  /** The browser leaves for the client's redirect URI: its code, caught before it goes out. */
  function catchRedirect(page: Page): Promise<URL> {
    return new Promise((resolve) => {
      const pattern = `${new URL(REDIRECT_URI).origin}/**`;
      void page.route(pattern, async (route) => {
        await route.fulfill({ status: 200, contentType: 'text/plain', body: 'You can close this window.' });
        await page.unroute(pattern);
        resolve(new URL(route.request().url()));
      });
    });
  }

  it('connects an MCP client with the address alone: registration, PKCE, consent in the web app, token, a tool; revoking the key in settings ends it', async () => {
    const ws = await newWorkspace(s);
    const room = (await ws.owner.post('/api/v1/channels', { name: uniqueName('agents') })).body.data as { id: string; name: string };
    const auth = new TestClientAuth();
    const transport = await startClient(auth);

    const app = await signedIn(b, s.url, ws.ownerKey, '/');
    const back = catchRedirect(app.page);
    await app.page.goto(auth.authorizationUrl!.href);
    const form = app.page.getByRole('form', { name: 'Connect Test Agent to Axid?' });
    await form.waitFor();
    expect(await app.page.getByTestId('redirect-host').textContent()).to.equal('127.0.0.1:9');
    // The SDK asks for every scope the server lists; the person gives less.
    await form.getByRole('checkbox', { name: /admin/ }).uncheck();
    await form.getByRole('checkbox', { name: /channels:write/ }).uncheck();
    await form.getByRole('radio', { name: 'Only the ones I choose' }).check();
    await form.getByRole('group', { name: 'Conversations it may use' }).getByRole('checkbox', { name: `#${room.name}` }).check();
    await form.getByRole('button', { name: 'Allow' }).click();
    const redirected = await back;
    expect(redirected.searchParams.get('state')).to.equal('client-state');
    const code = redirected.searchParams.get('code')!;
    expect(code).to.be.a('string');

    await transport.finishAuth(code);
    const client = new McpClient({ name: 'axid-oauth-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', s.url), { authProvider: auth }));
    const posted = await client.callTool({ name: 'post_message', arguments: { conversation_id: room.id, content: 'hello from an OAuth client' } });
    expect(posted.isError ?? false, JSON.stringify(posted.content)).to.equal(false);
    const tokens = auth.tokens()!;
    expect(tokens.scope?.split(' ').sort()).to.deep.equal(['events', 'files:write', 'messages:write', 'read']);

    // The key is in the person's list under the client's name; revoking it there ends the client's access.
    await app.page.goto('/settings');
    app.page.once('dialog', (d) => void d.accept());
    await app.page.getByRole('button', { name: 'Revoke MCP: Test Agent' }).click();
    await app.page.getByRole('button', { name: 'Revoke MCP: Test Agent' }).waitFor({ state: 'detached' });
    const refused = await fetch(`${s.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
    });
    expect(refused.status).to.equal(401);
    // The client's own next call is refused too: its refresh token ended with the key.
    auth.authorizationUrl = null;
    const next = await client.callTool({ name: 'list_conversations', arguments: {} }).then(
      () => 'answered',
      (err: Error) => err.name,
    );
    expect(next).to.not.equal('answered');
    await client.close();
    app.assertClean();
  });

  it('shows who asks, what and where; passes axe at desktop and phone width', async () => {
    const ws = await newWorkspace(s);
    await ws.owner.post('/api/v1/channels', { name: uniqueName('general') });
    const problems: string[] = [];
    for (const [viewport, scheme, tag] of [
      [{ width: 1280, height: 800 }, 'light', 'desktop'],
      [{ width: 390, height: 844 }, 'dark', 'phone-dark'],
    ] as const) {
      const auth = new TestClientAuth();
      await startClient(auth);
      const app = await signedIn(b, s.url, ws.ownerKey, '/', viewport, scheme);
      await app.page.goto(auth.authorizationUrl!.href);
      const form = app.page.getByRole('form', { name: 'Connect Test Agent to Axid?' });
      await form.waitFor();
      await form.getByRole('radio', { name: 'Only the ones I choose' }).check();
      for (const p of await axeProblems(app.page)) problems.push(`${tag}: ${p}`);
      await screenshot(app.page, `oauth-consent-${tag}`);
      // Deny: the client hears access_denied.
      const back = catchRedirect(app.page);
      await form.getByRole('button', { name: 'Deny' }).click();
      expect((await back).searchParams.get('error')).to.equal('access_denied');
      app.assertClean();
    }
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });
});
