// The companion tool server (services/mcp/README.md), driven through the SDK's real
// Client over stdio against the test stack.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { validateContentJson, type BlockRules } from '../../shared/blocks/index.js';
import { Client as HttpClient } from '../support/client.js';
import { expectOk } from '../support/expect.js';
import { call, closedPort, json, notAxidServer, REPO_ROOT, startMcp, withMcp, type ToolResult } from '../support/mcp.js';
import { level3Stack, newWorkspace, stack, uniqueName, type TestWorkspace } from '../support/stack.js';

const TOOL_NAMES = ['compose_block_message', 'inspect_workspace', 'scaffold_bot_project', 'send_test_message', 'setup_axid_bot'];
// The tool checks what a level-3 server takes: the agent blocks included.
const DEFAULT_RULES: BlockRules = { trackerHosts: ['linear.app'], codeHosts: ['github.com'], agentBlocks: true };

const envFor = (key: string, extra: Record<string, string> = {}) => ({ AXID_API_KEY: key, AXID_BASE_URL: stack().url, ...extra });

/** A tool error: isError, JSON {error: {code, message, hint}}, no structuredContent. */
function expectToolError(result: ToolResult, code: string) {
  expect(result.isError, JSON.stringify(result)).to.equal(true);
  const body = json(result);
  expect(body.error.code, JSON.stringify(body)).to.equal(code);
  expect(body.error.message).to.be.a('string').and.not.empty;
  expect(body.error.hint).to.be.a('string').and.not.empty;
  return body.error as { code: string; message: string; hint: string; status?: number };
}

/** A success: not an error, structuredContent equal to the JSON text. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function expectToolOk(result: ToolResult): any {
  expect(result.isError ?? false, JSON.stringify(result)).to.equal(false);
  expect(result.structuredContent).to.deep.equal(json(result));
  return result.structuredContent;
}

async function agentCount(ws: TestWorkspace) {
  const res = await ws.owner.get('/api/v1/agents?limit=200');
  return expectOk(res).data.length as number;
}

// ---- documents for compose_block_message ----------------------------------------

const USER = '3f1c2b9e-8a4d-4c2e-9f6a-1b2c3d4e5f60';
const doc = (...content: unknown[]) => ({ type: 'doc', content });
const block = (name: string, props: unknown) => ({ type: `block_${name}`, attrs: { blockName: name, version: 1, props } });
const paragraph = (...content: unknown[]) => ({ type: 'paragraph', content });

/** Documents whose verdict the tool, the validator and the API must agree on. */
export const AGREEMENT_TABLE: { name: string; doc: unknown }[] = [
  { name: 'empty document', doc: doc() },
  { name: 'paragraph with a mention', doc: doc(paragraph({ type: 'text', text: 'hi ' }, { type: 'mention', attrs: { id: USER, label: 'Ann' } })) },
  { name: 'button group with a url button', doc: doc(block('button_group', { buttons: [{ label: 'Open', url: 'https://example.com', style: 'primary' }] })) },
  { name: 'button with both url and actionId', doc: doc(block('button_group', { buttons: [{ label: 'X', url: 'https://example.com', actionId: 'x' }] })) },
  { name: 'button with a javascript: url', doc: doc(block('button_group', { buttons: [{ label: 'X', url: 'javascript:alert(1)' }] })) },
  { name: 'pull request card on github.com', doc: doc(block('repo_pr_card', { url: 'https://github.com/o/r/pull/1', title: 'Fix' })) },
  { name: 'pull request card on another host', doc: doc(block('repo_pr_card', { url: 'https://github.com.evil.example/o/r/pull/1' })) },
  { name: 'issue card on linear.app', doc: doc(block('tracker_issue_card', { url: 'https://linear.app/t/issue/T-1' })) },
  { name: 'alert banner with label and url', doc: doc(block('alert_banner', { variant: 'error', text: 'Down', actionLabel: 'Status', actionUrl: 'https://status.example.com' })) },
  { name: 'unknown block', doc: doc(block('carousel', {})) },
  { name: 'wrong version', doc: doc({ type: 'block_divider', attrs: { blockName: 'divider', version: 2, props: {} } }) },
  { name: 'not a document', doc: { type: 'paragraph' } },
];

describe('MCP tool server', function () {
  this.timeout(60_000);

  describe('tools/list', () => {
    it('lists exactly the five tools, each with a description, an input schema and an output schema', async () => {
      await withMcp({ AXID_BASE_URL: stack().url }, async (client) => {
        const { tools } = await client.listTools();
        expect(tools.map((t) => t.name).sort()).to.deep.equal(TOOL_NAMES);
        for (const tool of tools) {
          expect(tool.description, tool.name).to.be.a('string').with.length.greaterThan(60);
          expect(tool.inputSchema.type, tool.name).to.equal('object');
          expect(tool.outputSchema?.type, tool.name).to.equal('object');
        }
        const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
        expect(byName.setup_axid_bot!.inputSchema.required).to.deep.equal(['name']);
        expect(byName.scaffold_bot_project!.inputSchema.required).to.have.members(['bot_name', 'target_runtime']);
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
        expect((byName.scaffold_bot_project!.inputSchema.properties as any).target_runtime.enum).to.deep.equal(['node', 'cloudflare-workers', 'vercel']);
        expect(byName.compose_block_message!.inputSchema.required).to.deep.equal(['content_json']);
        expect(byName.compose_block_message!.inputSchema.properties).to.have.property('available_blocks');
        expect(byName.send_test_message!.inputSchema.required).to.have.members(['channel_id', 'content']);
        expect(byName.send_test_message!.inputSchema.properties).to.have.property('content_json');
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
        expect((byName.inspect_workspace!.inputSchema.properties as any).include.items.enum).to.include.members(['channels', 'members', 'me', 'workspace']);
        expect(byName.setup_axid_bot!.outputSchema!.required).to.include.members(['bot_user_id', 'api_key', 'channels']);
        expect(byName.send_test_message!.outputSchema!.required).to.include.members(['message_id', 'card_origin']);
      });
    });

    it('writes nothing but JSON-RPC messages to stdout', async () => {
      const child = spawn('npx', ['tsx', 'services/mcp/src/main.ts'], { cwd: REPO_ROOT, env: { ...process.env, AXID_API_KEY: '', AXID_BASE_URL: stack().url }, stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      const answered = new Promise<void>((resolve) => child.stdout.on('data', () => stdout.includes('"id":3') && resolve()));
      const send = (m: unknown) => child.stdin.write(`${JSON.stringify(m)}\n`);
      send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
      send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
      send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'inspect_workspace', arguments: { include: ['me'] } } });
      await answered;
      child.stdin.end();
      await new Promise((resolve) => child.on('close', resolve));
      const lines = stdout.split('\n').filter(Boolean);
      expect(lines).to.have.length(3);
      for (const line of lines) expect(JSON.parse(line).jsonrpc).to.equal('2.0');
      expect(stderr).to.include('[axid-mcp]');
    });
  });

  describe('setup_axid_bot', () => {
    it('creates a bot whose key works against the API as an agent', async () => {
      const ws = await newWorkspace();
      const name = uniqueName('helper');
      const result = await withMcp(envFor(ws.ownerKey), (c) => call(c, 'setup_axid_bot', { name }));
      const out = expectToolOk(result);
      expect(out.bot_user_id).to.be.a('string');
      expect(out.api_key).to.be.a('string').and.not.empty;
      expect(out.channels).to.be.an('array');
      const me = expectOk(await new HttpClient(stack().url, out.api_key).get('/api/v1/users/me')).data;
      expect(me).to.include({ id: out.bot_user_id, name, is_agent: true });
    });

    it('refuses a bot key with forbidden and a hint that an admin key is needed, creating nothing', async () => {
      const ws = await newWorkspace();
      const bot = await ws.user({ is_agent: true });
      const before = await agentCount(ws);
      const result = await withMcp(envFor(bot.key), (c) => call(c, 'setup_axid_bot', { name: uniqueName('child') }));
      const error = expectToolError(result, 'forbidden');
      expect(error.hint).to.match(/admin/i);
      expect(error.status).to.equal(403);
      expect(await agentCount(ws)).to.equal(before);
    });

    it('refuses a plain member key with forbidden', async () => {
      const ws = await newWorkspace();
      const member = await ws.user({ role: 'member' });
      const result = await withMcp(envFor(member.key), (c) => call(c, 'setup_axid_bot', { name: uniqueName('bot') }));
      expectToolError(result, 'forbidden');
    });

    it('rejects an empty name before calling the API', async () => {
      const ws = await newWorkspace();
      const before = await agentCount(ws);
      const result = await withMcp(envFor(ws.ownerKey), (c) => call(c, 'setup_axid_bot', { name: '' }));
      expect(result.isError).to.equal(true);
      expect(JSON.stringify(result.content)).to.match(/name/);
      expect(await agentCount(ws)).to.equal(before);
    });
  });

  describe('configuration errors', () => {
    it('without AXID_API_KEY, API tools say how to set it', async () => {
      await withMcp({ AXID_BASE_URL: stack().url }, async (client) => {
        for (const [tool, args] of [
          ['setup_axid_bot', { name: 'x' }],
          ['inspect_workspace', { include: ['me'] }],
          ['send_test_message', { channel_id: 'c', content: 'hi' }],
        ] as const) {
          const error = expectToolError(await call(client, tool, args), 'missing_api_key');
          expect(error.hint, tool).to.include('AXID_API_KEY');
        }
      });
    });

    it('an unreachable AXID_BASE_URL is reported as such', async () => {
      const ws = await newWorkspace();
      const port = await closedPort();
      const result = await withMcp({ AXID_API_KEY: ws.ownerKey, AXID_BASE_URL: `http://127.0.0.1:${port}` }, (c) => call(c, 'inspect_workspace', { include: ['me'] }));
      const error = expectToolError(result, 'unreachable');
      expect(error.message).to.include(`127.0.0.1:${port}`);
      expect(error.hint).to.include('AXID_BASE_URL');
    });

    it('an AXID_BASE_URL that is not an Axid server is reported as such', async () => {
      const ws = await newWorkspace();
      const other = await notAxidServer();
      try {
        const result = await withMcp({ AXID_API_KEY: ws.ownerKey, AXID_BASE_URL: other.url }, (c) => call(c, 'inspect_workspace', { include: ['me'] }));
        const error = expectToolError(result, 'unexpected_response');
        expect(error.hint).to.include('AXID_BASE_URL');
      } finally {
        await other.close();
      }
    });

    it('a wrong key carries the API code unauthorized', async () => {
      const result = await withMcp(envFor('not-a-real-key-0000000000000000000000'), (c) => call(c, 'inspect_workspace', { include: ['me'] }));
      const error = expectToolError(result, 'unauthorized');
      expect(error.hint).to.include('AXID_API_KEY');
    });
  });

  describe('compose_block_message', () => {
    it('agrees with the shared validator on every document of the table, offline and without a key', async () => {
      const port = await closedPort();
      await withMcp({ AXID_BASE_URL: `http://127.0.0.1:${port}` }, async (client) => {
        for (const row of AGREEMENT_TABLE) {
          const out = expectToolOk(await call(client, 'compose_block_message', { content_json: row.doc }));
          const expected = validateContentJson(row.doc, DEFAULT_RULES);
          if (expected.valid) {
            const { document: _stored, ...answer } = expected; // what the server stores is not part of the tool's answer
            expect(out, row.name).to.deep.equal(answer);
          } else {
            expect(out, row.name).to.include({ valid: false, error_code: 'validation_error', message: expected.message, hint: expected.hint });
          }
        }
      });
    });

    it('reports actionId buttons live on a level-3 server, disabled on a level-2 one, and unknown when none answers', async () => {
      const d = doc(paragraph({ type: 'text', text: 'Deploy?' }), block('button_group', { buttons: [{ label: 'Ship', actionId: 'ship' }, { label: 'Docs', url: 'https://example.com' }, { label: 'Stop', actionId: 'stop' }] }));
      const at = async (baseUrl: string) => withMcp({ AXID_BASE_URL: baseUrl }, async (client) => expectToolOk(await call(client, 'compose_block_message', { content_json: d })));
      const three = await at((await level3Stack()).url);
      expect(three.valid).to.equal(true);
      expect(three.action_buttons).to.deep.include({ action_ids: ['ship', 'stop'], live: true, feature_level: 3 });
      expect(three.action_buttons.note).to.include('interaction.action');
      const two = await at(stack().url);
      expect(two.action_buttons).to.deep.include({ action_ids: ['ship', 'stop'], live: false, feature_level: 2 });
      expect(two.action_buttons.note).to.include('FEATURE_LEVEL=3');
      const offline = await at(`http://127.0.0.1:${await closedPort()}`);
      expect(offline.valid).to.equal(true);
      expect(offline.action_buttons).to.deep.include({ live: false, feature_level: null });
      // A document without actionId buttons says nothing about them.
      const noActions = await withMcp({ AXID_BASE_URL: stack().url }, async (client) => expectToolOk(await call(client, 'compose_block_message', { content_json: doc(block('divider', {})) })));
      expect(noActions).to.not.have.property('action_buttons');
    });

    it('knows the agent blocks: checks their props, and says whether the server takes them (level 3) and how readers answer', async () => {
      const expires = new Date(Date.now() + 3600_000).toISOString();
      const d = doc(paragraph({ type: 'text', text: 'Deploy?' }), block('approval_request', { title: 'Deploy main?', expires_at: expires }), block('feedback_buttons', {}));
      const at = async (baseUrl: string, content_json: unknown = d) =>
        withMcp({ AXID_BASE_URL: baseUrl }, async (client) => expectToolOk(await call(client, 'compose_block_message', { content_json })));
      const three = await at((await level3Stack()).url);
      expect(three.valid).to.equal(true);
      expect(three.agent_blocks).to.deep.include({ names: ['approval_request', 'feedback_buttons'], live: true, feature_level: 3 });
      expect(three.agent_blocks.note).to.include('/api/v1/interactions/approvals');
      const two = await at(stack().url);
      expect(two.agent_blocks).to.deep.include({ live: false, feature_level: 2 });
      expect(two.agent_blocks.note).to.include('FEATURE_LEVEL=3');
      const bad = await at(stack().url, doc(block('approval_request', { title: 'Deploy?' })));
      expect(bad).to.include({ valid: false, path: 'content.0.attrs.props.expires_at' });
      expect(bad.hint).to.include('approver_ids');
    });

    it('honours available_blocks', async () => {
      await withMcp({}, async (client) => {
        const d = doc(block('divider', {}));
        expect(expectToolOk(await call(client, 'compose_block_message', { content_json: d, available_blocks: ['divider', 'text'] })).valid).to.equal(true);
        const out = expectToolOk(await call(client, 'compose_block_message', { content_json: d, available_blocks: ['text'] }));
        expect(out).to.include({ valid: false, error_code: 'validation_error' });
        expect(out.message).to.match(/^content\.0\.type: .*not available/);
        expect(out.hint).to.include('text');
      });
    });

    it('reads TRACKER_HOSTS and CODE_HOSTS like the server', async () => {
      const pr = doc(block('repo_pr_card', { url: 'https://git.example.com/o/r/pull/1' }));
      await withMcp({ CODE_HOSTS: 'Git.Example.com., gitlab.com' }, async (client) => {
        const out = expectToolOk(await call(client, 'compose_block_message', { content_json: pr }));
        expect(out).to.include({ valid: true, card_origin: 'https://git.example.com' });
        const github = expectToolOk(await call(client, 'compose_block_message', { content_json: doc(block('repo_pr_card', { url: 'https://github.com/o/r/pull/1' })) }));
        expect(github.valid).to.equal(false);
      });
    });

    it('accepts the document as JSON text and reports text that is not JSON', async () => {
      await withMcp({}, async (client) => {
        const d = doc(paragraph({ type: 'mention', attrs: { id: USER } }));
        const out = expectToolOk(await call(client, 'compose_block_message', { content_json: JSON.stringify(d) }));
        expect(out).to.deep.equal({ valid: true, preview: `@${USER}`, card_origin: null, mentioned_user_ids: [USER] });
        const bad = expectToolOk(await call(client, 'compose_block_message', { content_json: '{"type": "doc",' }));
        expect(bad).to.include({ valid: false, error_code: 'validation_error' });
        expect(bad.message).to.match(/content_json.*JSON/);
      });
    });

    it('agrees with POST /channels/{id}/messages on every document of the table', async () => {
      const ws = await newWorkspace();
      const channel = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('compose') }), 201).data;
      await withMcp(envFor(ws.ownerKey), async (client) => {
        for (const row of AGREEMENT_TABLE) {
          const verdict = expectToolOk(await call(client, 'compose_block_message', { content_json: row.doc }));
          const res = await ws.owner.post(`/api/v1/channels/${channel.id}/messages`, { content: row.name, content_json: row.doc });
          if (verdict.valid) {
            expect(res.status, `${row.name}: ${res.text}`).to.equal(201);
            expect(res.body.data.card_origin, row.name).to.equal(verdict.card_origin);
            expect(res.body.data.mentioned_user_ids, row.name).to.deep.equal(verdict.mentioned_user_ids);
          } else {
            expect(res.status, `${row.name}: ${res.text}`).to.equal(400);
            expect(res.body.error.code).to.equal('validation_error');
            expect(res.body.error.message, row.name).to.include(verdict.message);
          }
        }
      });
    });
  });

  describe('send_test_message', () => {
    it('posts a message and returns its id and card_origin', async () => {
      const ws = await newWorkspace();
      const channel = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('send') }), 201).data;
      const content_json = doc(block('repo_pr_card', { url: 'https://github.com/o/r/pull/7', title: 'Seven' }));
      const out = expectToolOk(await withMcp(envFor(ws.ownerKey), (c) => call(c, 'send_test_message', { channel_id: channel.id, content: 'PR 7', content_json })));
      expect(out).to.include({ channel_id: channel.id, card_origin: 'https://github.com' });
      const message = expectOk(await ws.owner.get(`/api/v1/channels/${channel.id}/messages/${out.message_id}`)).data;
      expect(message).to.include({ content: 'PR 7', card_origin: 'https://github.com' });
      expect(message.content_json).to.deep.equal(content_json);
    });

    it('an unknown channel is a not_found tool error pointing at inspect_workspace', async () => {
      const ws = await newWorkspace();
      const result = await withMcp(envFor(ws.ownerKey), (c) => call(c, 'send_test_message', { channel_id: '00000000-0000-4000-8000-000000000000', content: 'hi' }));
      const error = expectToolError(result, 'not_found');
      expect(error.hint).to.include('inspect_workspace');
    });

    it('an invalid content_json is the API validation_error with a hint to compose_block_message, posting nothing', async () => {
      const ws = await newWorkspace();
      const channel = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('send') }), 201).data;
      const bad = doc(block('button_group', { buttons: [{ label: 'X', url: 'http://insecure.example.com' }] }));
      const result = await withMcp(envFor(ws.ownerKey), (c) => call(c, 'send_test_message', { channel_id: channel.id, content: 'x', content_json: bad }));
      const error = expectToolError(result, 'validation_error');
      expect(error.message).to.include('content_json');
      expect(error.hint).to.include('compose_block_message');
      expect(expectOk(await ws.owner.get(`/api/v1/channels/${channel.id}/messages`)).data).to.have.length(0);
    });
  });

  describe('inspect_workspace', () => {
    it('returns the workspace, the caller and the members it asks for', async () => {
      const ws = await newWorkspace();
      const bot = await ws.user({ is_agent: true });
      const out = expectToolOk(await withMcp(envFor(bot.key), (c) => call(c, 'inspect_workspace', { include: ['workspace', 'me', 'members'] })));
      expect(Object.keys(out)).to.deep.equal(['workspace', 'me', 'members']);
      expect(out.workspace.id).to.equal(ws.workspaceId);
      expect(out.me).to.include({ id: bot.id, is_agent: true });
      expect(out.members.map((m: { id: string }) => m.id)).to.include.members([ws.ownerId, bot.id]);
    });

    it('lists the channels the key can see', async () => {
      const ws = await newWorkspace();
      const open = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('open') }), 201).data;
      const hidden = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('hidden'), is_private: true }), 201).data;
      const bot = await ws.user({ is_agent: true });
      const out = expectToolOk(await withMcp(envFor(bot.key), (c) => call(c, 'inspect_workspace', { include: ['channels'] })));
      const ids = out.channels.map((c: { id: string }) => c.id);
      expect(ids).to.include(open.id);
      expect(ids).not.to.include(hidden.id);
    });

    it('rejects an unknown section', async () => {
      const ws = await newWorkspace();
      const result = await withMcp(envFor(ws.ownerKey), (c) => call(c, 'inspect_workspace', { include: ['secrets'] }));
      expect(result.isError).to.equal(true);
      expect(JSON.stringify(result.content)).to.match(/include/);
    });
  });

  it('a session answers several calls and the server exits when stdin closes', async () => {
    const ws = await newWorkspace();
    const session = await startMcp(envFor(ws.ownerKey));
    const a = expectToolOk(await call(session.client, 'inspect_workspace', { include: ['me'] }));
    const b = expectToolOk(await call(session.client, 'scaffold_bot_project', { bot_name: 'x', target_runtime: 'node' }));
    expect(a.me.id).to.equal(ws.ownerId);
    expect(b.files).to.have.property('bot.js');
    await session.close();
    expect(session.stderr()).to.include('ready on stdio');
  });
});
