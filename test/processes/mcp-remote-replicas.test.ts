// The remote MCP endpoint across API replicas (contract §15; docs/mcp.md): it
// keeps no session, so one client's calls may land on any replica in turn,
// and go on when a replica restarts. The SDK's client goes through a "load
// balancer" (its fetch) that sends each request to the next live replica;
// the OAuth steps of one client are spread over both replicas too.
import { expect } from 'chai';
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { Client, serverLevels } from '../support/client.js';
import { expectOk } from '../support/expect.js';
import { authorize, callOk, connectMcp, newPkce, REDIRECT_URI, registerClient, token } from '../support/mcp-remote.js';
import { processEnv, startProcess, type RunningProcess } from '../support/stack-process.js';
import { testEnv } from '../support/stack.js';

describe('Remote MCP across API replicas (level 3)', function () {
  this.timeout(120_000);
  const env = testEnv();
  const key = 'm'.repeat(40);
  const common = processEnv(env, { BOOTSTRAP_ADMIN_KEY: key, LOG_LEVEL: 'warn', FEATURE_LEVEL: '3', PUBLIC_BASE_URL: 'http://localhost:9' });
  let replicas: RunningProcess[] = [];
  const served: string[] = [];

  /** Round robin over the live replicas, remembering which one answered each request. */
  let turn = 0;
  const balancer: typeof fetch = (input, init) => {
    const target = replicas[turn++ % replicas.length]!;
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    served.push(target.url);
    return fetch(`${target.url}${url.pathname}${url.search}`, init);
  };

  const start = async (roles: string) => {
    const replica = await startProcess({ ...common, ROLES: roles });
    serverLevels.set(replica.url, '3');
    return replica;
  };

  before(async () => {
    replicas = [await start('api,worker'), await start('api')];
  });
  after(async () => {
    await Promise.all(replicas.map((r) => (serverLevels.delete(r.url), r.stop())));
    await env.cleanup();
  });

  it('serves one client’s calls on both replicas in turn, and goes on while one restarts', async () => {
    const owner = new Client(replicas[0]!.url, key);
    const room = expectOk(await owner.post('/api/v1/channels', { name: `replicas-${Date.now()}` }), 201).data as { id: string };
    let client: McpClient | null = null;
    try {
      client = await connectMcp('http://balancer.invalid', key, balancer);
      const posted: string[] = [];
      for (let i = 0; i < 4; i++) posted.push((await callOk(client, 'post_message', { conversation_id: room.id, content: `call ${i}` })).message_id);
      const read = await callOk(client, 'read_conversation', { conversation_id: room.id });
      expect(read.messages.map((m: { id: string }) => m.id)).to.deep.equal([...posted].reverse());
      expect(new Set(served)).to.have.property('size', 2);

      // One replica restarts: the client's next calls go to the other, then to the new one, without a new session.
      const [, second] = replicas;
      serverLevels.delete(replicas[0]!.url);
      await replicas[0]!.stop();
      replicas = [second!];
      served.length = 0;
      await callOk(client, 'list_conversations', {});
      replicas = [second!, await start('api')];
      const after = await callOk(client, 'post_message', { conversation_id: room.id, content: 'after the restart' });
      await callOk(client, 'react', { conversation_id: room.id, message_id: after.message_id, emoji: 'tada' });
      expect(new Set(served)).to.have.property('size', 2);
    } finally {
      await client?.close();
    }
  });

  it('takes one client’s OAuth steps on either replica: register on one, authorize on the other, token on the first', async () => {
    const [a, b] = replicas as [RunningProcess, RunningProcess];
    const registered = await registerClient(a.url);
    const pkce = newPkce();
    // The resource is the deployment's address (PUBLIC_BASE_URL), whichever replica answers.
    const asked = await authorize(b.url, registered.client_id, pkce, { scope: 'read', resource: 'http://localhost:9/mcp' });
    expect(asked.status, asked.body ?? '').to.equal(302);
    const id = new URL(asked.location!).pathname.split('/').pop()!;
    const decided = expectOk(await new Client(b.url, key).post(`/api/v1/oauth/authorizations/${id}`, { approve: true })).data;
    const code = new URL(decided.redirect_to).searchParams.get('code')!;
    const issued = await token(a.url, { grant_type: 'authorization_code', client_id: registered.client_id, code, code_verifier: pkce.code_verifier, redirect_uri: REDIRECT_URI });
    expect(issued.status, JSON.stringify(issued.body)).to.equal(200);
    const client = await connectMcp(b.url, issued.body.access_token);
    try {
      await callOk(client, 'list_conversations', {});
    } finally {
      await client.close();
    }
  });
});
