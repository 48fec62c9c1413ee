// The remote MCP endpoint (contract §15; docs/mcp.md), through the SDK's own
// client over Streamable HTTP: the tools with a Bearer API key, and OAuth 2.1
// as an MCP client does it (metadata, registration, PKCE, consent through the
// API the web app's consent screen calls, token, refresh, revocation).
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { expect } from 'chai';
import type { Stack } from '../../services/stack.js';
import { Client } from '../support/client.js';
import { expectOk } from '../support/expect.js';
import { authorize, callError, callOk, connectMcp, mcpStack, newPkce, REDIRECT_URI, registerClient, token } from '../support/mcp-remote.js';
import { newWorkspace, stack, uniqueName, type TestWorkspace } from '../support/stack.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const jsonOf = (res: globalThis.Response): Promise<any> => res.json();

const TOOLS = [
  'compose_block_message',
  'inspect_workspace',
  'invoke_command',
  'list_conversations',
  'post_message',
  'react',
  'read_conversation',
  'scaffold_bot_project',
  'search_messages',
  'send_test_message',
  'setup_axid_bot',
];

describe('Remote MCP at level 2', () => {
  it('does not exist: /mcp and the OAuth endpoints answer as unknown paths', async () => {
    const ws = await newWorkspace();
    for (const path of ['/mcp', '/register', '/token']) {
      const res = await fetch(`${stack().url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${ws.ownerKey}`, 'content-type': 'application/json' }, body: '{}' });
      expect(res.status, path).to.equal(404);
      expect((await jsonOf(res)).error.code, path).to.equal('not_found');
    }
    expect((await ws.owner.get('/api/v1/oauth/authorizations/00000000-0000-4000-8000-000000000000')).status).to.equal(404);
  });
});

describe('Remote MCP (level 3)', function () {
  this.timeout(60_000);
  let s: Stack;
  let stop: () => Promise<void>;
  let ws: TestWorkspace;
  const clients: McpClient[] = [];

  before(async () => {
    const started = await mcpStack();
    s = started.stack;
    stop = started.stop;
  });
  after(async () => {
    await stop();
  });
  beforeEach(async () => {
    ws = await newWorkspace(s);
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });

  const connect = async (key: string) => {
    const client = await connectMcp(s.url, key);
    clients.push(client);
    return client;
  };
  const channel = async (owner: Client, o: { is_private?: boolean } = {}) => expectOk(await owner.post('/api/v1/channels', { name: uniqueName('mcp'), ...o }), 201).data as { id: string; name: string };

  describe('with a Bearer API key', () => {
    it('lists the five tools of the tool server and the six conversation tools', async () => {
      const client = await connect(ws.ownerKey);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).to.deep.equal(TOOLS);
      for (const tool of tools) expect(tool.outputSchema?.type, tool.name).to.equal('object');
    });

    it('posts, reads, searches and reacts as the key’s user, through the API’s own routes', async () => {
      const general = await channel(ws.owner);
      const client = await connect(ws.ownerKey);
      const word = `zebra${Date.now()}`;
      const posted = await callOk(client, 'post_message', { conversation_id: general.id, content: `hello ${word}` });
      expect(posted.message.author_id).to.equal(ws.ownerId);
      expect(posted.message.channel_id).to.equal(general.id);
      const reply = await callOk(client, 'post_message', { conversation_id: general.id, content: 'a reply', thread_id: posted.message_id });
      expect(reply.message.thread_id).to.equal(posted.message_id);

      const listed = await callOk(client, 'list_conversations', {});
      expect(listed.channels.map((c: { id: string }) => c.id)).to.include(general.id);
      const read = await callOk(client, 'read_conversation', { conversation_id: general.id });
      expect(read.messages[0].id).to.equal(posted.message_id);
      const thread = await callOk(client, 'read_conversation', { conversation_id: general.id, thread_id: posted.message_id });
      expect(thread.messages.map((m: { id: string }) => m.id)).to.deep.equal([reply.message_id]);
      const found = await callOk(client, 'search_messages', { query: word });
      expect(found.messages.map((m: { id: string }) => m.id)).to.deep.equal([posted.message_id]);

      const reacted = await callOk(client, 'react', { conversation_id: general.id, message_id: posted.message_id, emoji: 'thumbsup' });
      expect(reacted.reaction.emoji).to.equal('thumbsup');
      const stored = expectOk(await ws.owner.get(`/api/v1/channels/${general.id}/messages/${posted.message_id}`)).data;
      expect(stored.reactions).to.deep.equal([{ emoji: 'thumbsup', count: 1, user_ids: [ws.ownerId] }]);
    });

    it('reaches DMs by their conversation id too', async () => {
      const other = await ws.user();
      const dm = expectOk(await ws.owner.post('/api/v1/dms', { user_ids: [other.id] }), 201).data;
      const client = await connect(ws.ownerKey);
      const posted = await callOk(client, 'post_message', { conversation_id: dm.id, content: 'in a DM' });
      const read = expectOk(await other.client.get(`/api/v1/dms/${dm.id}/messages`)).data;
      expect(read[0].id).to.equal(posted.message_id);
      const listed = await callOk(client, 'list_conversations', {});
      expect(listed.dms.map((c: { id: string }) => c.id)).to.include(dm.id);
    });

    it('invokes an agent’s command in a conversation both are in, and answers not_found where the agent is not', async () => {
      const agent = await ws.user({ is_agent: true });
      const command = `deploy-${Date.now() % 100000}`;
      expectOk(await agent.client.put('/api/v1/users/me/commands', [{ name: command, description: 'Deploy' }]));
      const room = await channel(ws.owner);
      const lonely = await channel(ws.owner);
      expectOk(await ws.owner.post(`/api/v1/channels/${room.id}/members`, { user_id: agent.id }), 201);
      const client = await connect(ws.ownerKey);
      const invoked = await callOk(client, 'invoke_command', { conversation_id: room.id, command, text: 'main' });
      expect(invoked.id).to.be.a('string');
      expect((await callError(client, 'invoke_command', { conversation_id: lonely.id, command, text: 'main' })).code).to.equal('not_found');
    });

    it('answers within the key’s scopes: a read key reads and cannot post (insufficient_scope)', async () => {
      const general = await channel(ws.owner);
      const readKey = expectOk(await ws.owner.post('/api/v1/api-keys', { name: 'read only', scopes: ['read'] }), 201).data.key;
      const client = await connect(readKey);
      await callOk(client, 'read_conversation', { conversation_id: general.id });
      const refused = await callError(client, 'post_message', { conversation_id: general.id, content: 'no' });
      expect(refused.code).to.equal('insufficient_scope');
      expect(refused.message).to.include('messages:write');
      // The hint speaks of this client's way in, not of the stdio server's AXID_API_KEY.
      expect(refused.hint).to.include('consent screen').and.not.include('AXID_API_KEY');
      expect(expectOk(await ws.owner.get(`/api/v1/channels/${general.id}/messages`)).data).to.deep.equal([]);
    });

    it('opens the server’s event stream on GET and ends a session on DELETE (there is none to keep: any replica answers)', async () => {
      const controller = new AbortController();
      const headers = { authorization: `Bearer ${ws.ownerKey}`, 'mcp-protocol-version': '2025-06-18' };
      const stream = await fetch(`${s.url}/mcp`, { headers: { ...headers, accept: 'text/event-stream' }, signal: controller.signal });
      expect(stream.status).to.equal(200);
      expect(stream.headers.get('content-type')).to.match(/^text\/event-stream/);
      expect(stream.headers.get('mcp-session-id')).to.equal(null);
      controller.abort();
      const ended = await fetch(`${s.url}/mcp`, { method: 'DELETE', headers });
      expect(ended.status).to.equal(200);
    });

    it('answers 401 with a WWW-Authenticate that names the protected resource metadata, without a key or with a bad one', async () => {
      for (const authorization of [undefined, 'Bearer axid_nope']) {
        const res = await fetch(`${s.url}/mcp`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(authorization ? { authorization } : {}) },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
        });
        expect(res.status).to.equal(401);
        expect(res.headers.get('www-authenticate')).to.match(/^Bearer /).and.include(`resource_metadata="${s.url}/.well-known/oauth-protected-resource/mcp"`);
        expect((await jsonOf(res)).error.code).to.equal('unauthorized');
      }
    });
  });

  describe('OAuth 2.1', () => {
    /** Register, authorize with PKCE, consent as the owner (optionally to some conversations), and exchange the code. */
    async function grant(o: { conversation_ids?: string[]; scope?: string } = {}) {
      const registered = await registerClient(s.url);
      const pkce = newPkce();
      const asked = await authorize(s.url, registered.client_id, pkce, { scope: o.scope ?? 'read messages:write', state: 'xyz' });
      expect(asked.status).to.equal(302);
      const consent = new URL(asked.location!);
      expect(consent.origin).to.equal(s.url);
      const id = /^\/oauth\/consent\/([^/]+)$/.exec(consent.pathname)![1]!;
      const described = expectOk(await ws.owner.get(`/api/v1/oauth/authorizations/${id}`)).data;
      expect(described.client.name).to.equal('Test Agent');
      expect(described.redirect_host).to.equal('127.0.0.1:9');
      expect(described.scopes).to.deep.equal(['read', 'messages:write']);
      const decided = expectOk(await ws.owner.post(`/api/v1/oauth/authorizations/${id}`, { approve: true, ...(o.conversation_ids ? { conversation_ids: o.conversation_ids } : {}) })).data;
      const back = new URL(decided.redirect_to);
      expect(back.origin + back.pathname).to.equal(REDIRECT_URI);
      expect(back.searchParams.get('state')).to.equal('xyz');
      return { client: registered, pkce, code: back.searchParams.get('code')! };
    }

    const exchange = (g: Awaited<ReturnType<typeof grant>>, verifier = g.pkce.code_verifier) =>
      token(s.url, { grant_type: 'authorization_code', client_id: g.client.client_id, code: g.code, code_verifier: verifier, redirect_uri: REDIRECT_URI });

    it('publishes the protected resource and authorization server metadata an MCP client discovers', async () => {
      for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
        const prm = await jsonOf(await fetch(`${s.url}${path}`));
        expect(prm.resource, path).to.equal(`${s.url}/mcp`);
        expect(prm.authorization_servers, path).to.deep.equal([`${s.url}/`]);
      }
      const as = await jsonOf(await fetch(`${s.url}/.well-known/oauth-authorization-server`));
      expect(as.issuer).to.equal(`${s.url}/`);
      expect(as.authorization_endpoint).to.equal(`${s.url}/authorize`);
      expect(as.token_endpoint).to.equal(`${s.url}/token`);
      expect(as.registration_endpoint).to.equal(`${s.url}/register`);
      expect(as.code_challenge_methods_supported).to.deep.equal(['S256']);
      expect(as.token_endpoint_auth_methods_supported).to.deep.equal(['none']);
    });

    it('issues a scoped, expiring key bound to the client, listed with the person’s keys, that calls the tools; revoking it there ends it and its refresh', async () => {
      const general = await channel(ws.owner);
      const g = await grant();
      const issued = await exchange(g);
      expect(issued.status, JSON.stringify(issued.body)).to.equal(200);
      expect(issued.body.token_type).to.equal('Bearer');
      expect(issued.body.scope).to.equal('read messages:write');
      expect(issued.body.expires_in).to.be.within(3000, 3600);
      expect(issued.body.refresh_token).to.be.a('string');

      const keys = expectOk(await ws.owner.get('/api/v1/api-keys')).data;
      const key = keys.find((k: { name: string }) => k.name === 'MCP: Test Agent');
      expect(key, JSON.stringify(keys)).to.exist;
      expect(key.scopes).to.deep.equal(['read', 'messages:write']);
      expect(new Date(key.expires_at).getTime()).to.be.greaterThan(Date.now());

      const client = await connect(issued.body.access_token);
      await callOk(client, 'post_message', { conversation_id: general.id, content: 'from an OAuth client' });
      expect((await callError(client, 'setup_axid_bot', { name: uniqueName('bot') })).code).to.equal('insufficient_scope');

      const audit = expectOk(await ws.owner.get('/api/v1/audit-log?limit=50')).data.map((e: { action: string }) => e.action);
      expect(audit).to.include.members(['oauth.consented', 'oauth.token_issued', 'api_key.created']);

      expect((await ws.owner.delete(`/api/v1/api-keys/${key.id}`)).status).to.equal(204);
      const again = await fetch(`${s.url}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${issued.body.access_token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
      });
      expect(again.status).to.equal(401);
      const refreshed = await token(s.url, { grant_type: 'refresh_token', client_id: g.client.client_id, refresh_token: issued.body.refresh_token });
      expect(refreshed.status).to.equal(400);
      expect(refreshed.body.error).to.equal('invalid_grant');
    });

    it('a token for one channel cannot read another', async () => {
      const mine = await channel(ws.owner);
      const other = await channel(ws.owner);
      expectOk(await ws.owner.post(`/api/v1/channels/${other.id}/messages`, { content: 'secret plans' }), 201);
      const issued = await exchange(await grant({ conversation_ids: [mine.id] }));
      const client = await connect(issued.body.access_token);
      await callOk(client, 'read_conversation', { conversation_id: mine.id });
      expect((await callError(client, 'read_conversation', { conversation_id: other.id })).code).to.equal('not_found');
      const found = await callOk(client, 'search_messages', { query: 'secret plans' });
      expect(found.messages).to.deep.equal([]);
      const listed = await callOk(client, 'list_conversations', {});
      expect(listed.channels.map((c: { id: string }) => c.id)).to.deep.equal([mine.id]);
    });

    it('refuses a wrong PKCE verifier, then a reused code (revoking what it gave)', async () => {
      const g = await grant();
      const wrong = await exchange(g, newPkce().code_verifier);
      expect(wrong.status).to.equal(400);
      expect(wrong.body.error).to.equal('invalid_grant');
      const first = await exchange(g);
      expect(first.status).to.equal(200);
      const reused = await exchange(g);
      expect(reused.status).to.equal(400);
      expect(reused.body.error).to.equal('invalid_grant');
      // A code seen twice may have been stolen: the key it gave is revoked (RFC 6749 §4.1.2).
      const res = await new Client(s.url, first.body.access_token).get('/api/v1/users/me');
      expect(res.status).to.equal(401);
    });

    it('refuses an unregistered redirect URI at /authorize without redirecting to it', async () => {
      const registered = await registerClient(s.url);
      const asked = await authorize(s.url, registered.client_id, newPkce(), { redirectUri: 'https://evil.example/callback' });
      expect(asked.status).to.equal(400);
      expect(asked.location).to.equal(null);
      expect(JSON.parse(asked.body!).error).to.equal('invalid_request');
    });

    it('refuses a plain PKCE method and an unknown scope', async () => {
      const registered = await registerClient(s.url);
      const url = new URL('/authorize', s.url);
      url.search = new URLSearchParams({ response_type: 'code', client_id: registered.client_id, redirect_uri: REDIRECT_URI, code_challenge: 'abc', code_challenge_method: 'plain', state: 's' }).toString();
      const plain = await fetch(url, { redirect: 'manual' });
      expect(plain.status).to.equal(302);
      expect(new URL(plain.headers.get('location')!).searchParams.get('error')).to.equal('invalid_request');
      const unknown = await authorize(s.url, registered.client_id, newPkce(), { scope: 'read everything' });
      expect(new URL(unknown.location!).searchParams.get('error')).to.equal('invalid_scope');
    });

    it('an expired token is refused; refreshing rotates it, and the old refresh token no longer works', async () => {
      const g = await grant();
      const issued = await exchange(g);
      const keyId = expectOk(await ws.owner.get('/api/v1/api-keys')).data.find((k: { name: string }) => k.name === 'MCP: Test Agent').id;
      await s.rt.db('api_keys').where({ id: keyId }).update({ expires_at: new Date(Date.now() - 1000) });
      const expired = await new Client(s.url, issued.body.access_token).get('/api/v1/users/me');
      expect(expired.status).to.equal(401);
      expect(expired.body.error.code).to.equal('key_expired');

      const refreshed = await token(s.url, { grant_type: 'refresh_token', client_id: g.client.client_id, refresh_token: issued.body.refresh_token });
      expect(refreshed.status, JSON.stringify(refreshed.body)).to.equal(200);
      expect(refreshed.body.refresh_token).to.not.equal(issued.body.refresh_token);
      const client = await connect(refreshed.body.access_token);
      await callOk(client, 'list_conversations', {});
      const replayed = await token(s.url, { grant_type: 'refresh_token', client_id: g.client.client_id, refresh_token: issued.body.refresh_token });
      expect(replayed.status).to.equal(400);
      expect(replayed.body.error).to.equal('invalid_grant');
    });

    it('denying sends the client access_denied and issues nothing', async () => {
      const registered = await registerClient(s.url);
      const asked = await authorize(s.url, registered.client_id, newPkce(), { state: 'no' });
      const id = new URL(asked.location!).pathname.split('/').pop()!;
      const decided = expectOk(await ws.owner.post(`/api/v1/oauth/authorizations/${id}`, { approve: false })).data;
      const back = new URL(decided.redirect_to);
      expect(back.searchParams.get('error')).to.equal('access_denied');
      expect(back.searchParams.get('state')).to.equal('no');
      expect(back.searchParams.get('code')).to.equal(null);
      // Decided once: the request is gone.
      expect((await ws.owner.post(`/api/v1/oauth/authorizations/${id}`, { approve: true })).status).to.equal(404);
    });
  });
});
