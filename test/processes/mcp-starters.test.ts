// The starter projects of scaffold_bot_project: complete, type-correct, and
// the node bot answering mentions end to end (the serverless ones end to end:
// serverless-starters.test.ts).
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expectError, expectOk } from '../support/expect.js';
import { openRaw } from '../support/sse.js';
import { call, REPO_ROOT, run, waitForLine, withMcp } from '../support/mcp.js';
import { level3Stack, newWorkspace, stack, uniqueName } from '../support/stack.js';

type Files = Record<string, string>;
const RUNTIMES = ['node', 'cloudflare-workers', 'vercel'] as const;
const TRICKY_NAME = 'Echo "the" \\ Bot\'s';

async function scaffoldAll(botName: string): Promise<Record<(typeof RUNTIMES)[number], Files>> {
  return withMcp({}, async (client) => {
    const out: Partial<Record<(typeof RUNTIMES)[number], Files>> = {};
    for (const runtime of RUNTIMES) {
      const result = await call(client, 'scaffold_bot_project', { bot_name: botName, target_runtime: runtime });
      expect(result.isError ?? false, JSON.stringify(result)).to.equal(false);
      expect(result.structuredContent).to.include({ bot_name: botName, target_runtime: runtime });
      out[runtime] = result.structuredContent!.files as Files;
    }
    return out as Record<(typeof RUNTIMES)[number], Files>;
  });
}

/** Writes a project into a fresh temporary folder. */
function writeProject(files: Files): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'axid-starter-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

function startBot(dir: string, env: Record<string, string>) {
  const output = { text: '' };
  const child = spawn(process.execPath, ['bot.js'], { cwd: dir, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (c: Buffer) => (output.text += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output.text += c.toString()));
  return { child, output };
}

function stop(child: ChildProcess) {
  return new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

describe('scaffold_bot_project', function () {
  this.timeout(90_000);
  let projects: Awaited<ReturnType<typeof scaffoldAll>>;
  const dirs: string[] = [];

  before(async () => {
    projects = await scaffoldAll(TRICKY_NAME);
  });
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('node: a dependency-free ESM project with a start script and a README', () => {
    const files = projects.node;
    expect(Object.keys(files)).to.include.members(['package.json', 'bot.js', 'README.md', '.gitignore']);
    const pkg = JSON.parse(files['package.json']!);
    expect(pkg).to.include({ type: 'module', name: 'echo-the-bot-s-bot' });
    expect(pkg.description).to.include(TRICKY_NAME);
    expect(pkg.scripts.start).to.equal('node bot.js');
    expect(pkg.dependencies ?? {}).to.deep.equal({});
    expect(files['bot.js']).to.include('/api/v1/stream').and.include('AXID_API_KEY').and.include('AXID_BASE_URL');
    expect(files['README.md']).to.include('npm start').and.include(TRICKY_NAME);
  });

  it('node: bot.js is valid JavaScript', async () => {
    const dir = writeProject(projects.node);
    dirs.push(dir);
    const { code, output } = await run(process.execPath, ['--check', 'bot.js'], { cwd: dir });
    expect(code, output).to.equal(0);
  });

  it('cloudflare-workers: a wrangler.toml Worker whose fetch handler is an event endpoint, and it type-checks', async () => {
    const files = projects['cloudflare-workers'];
    expect(Object.keys(files)).to.include.members(['wrangler.toml', 'package.json', 'src/index.ts', 'src/axid.ts', 'tsconfig.json', 'README.md']);
    expect(files['wrangler.toml']).to.match(/^main = "src\/index.ts"$/m).and.include('AXID_SIGNING_SECRET');
    expect(files['src/index.ts']).to.include('fetch(').and.include('waitUntil');
    expect(files['README.md']).to.include('/api/v1/event-subscriptions').and.include('AXID_SIGNING_SECRET');
    expect(JSON.parse(files['package.json']!).devDependencies).to.have.property('wrangler');
    const dir = writeProject(files);
    dirs.push(dir);
    symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    const { code, output } = await run(path.join(REPO_ROOT, 'node_modules/.bin/tsc'), ['-p', dir, '--noEmit']);
    expect(code, output).to.equal(0);
  });

  it('vercel: an api/events.ts function that is an event endpoint, and it type-checks', async () => {
    const files = projects.vercel;
    expect(Object.keys(files)).to.include.members(['vercel.json', 'package.json', 'api/events.ts', 'api/_axid.ts', 'tsconfig.json', 'README.md']);
    expect(files['api/events.ts']).to.include('export async function POST');
    expect(files['README.md']).to.include('/api/v1/event-subscriptions').and.include('AXID_SIGNING_SECRET');
    const dir = writeProject(files);
    dirs.push(dir);
    symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    const { code, output } = await run(path.join(REPO_ROOT, 'node_modules/.bin/tsc'), ['-p', dir, '--noEmit']);
    expect(code, output).to.equal(0);
  });

  it('rejects an unknown runtime', async () => {
    const result = await withMcp({}, (c) => call(c, 'scaffold_bot_project', { bot_name: 'x', target_runtime: 'lambda' }));
    expect(result.isError).to.equal(true);
    expect(JSON.stringify(result.content)).to.include('target_runtime');
  });
});

// ---- the node bot against a scripted server: stream, threads, reconnect ---------

interface FakeMessage {
  id: string;
  channel_id: string;
  author_id: string;
  content: string;
  thread_id: string | null;
  mentioned_user_ids: string[];
  thread: { reply_count: number; last_reply_at: string } | null;
  created_at: string;
}

/** Just enough of the Axid API for the node bot, with the stream under the test's control. */
async function scriptedAxid() {
  const BOT = { id: 'bot-1', name: 'echo', display_name: null, is_agent: true };
  const messages: FakeMessage[] = [];
  const posted: { body: { content: string; thread_id?: string }; id: string }[] = [];
  const streams: ServerResponse[] = [];
  let clock = Date.parse('2026-01-01T00:00:00Z');
  const message = (m: Partial<FakeMessage> & { id: string; content: string }): FakeMessage => {
    const full: FakeMessage = { channel_id: 'ch-1', author_id: 'user-1', thread_id: null, mentioned_user_ids: [], thread: null, created_at: new Date((clock += 1000)).toISOString(), ...m };
    messages.push(full);
    if (full.thread_id) {
      const root = messages.find((r) => r.id === full.thread_id)!;
      root.thread = { reply_count: (root.thread?.reply_count ?? 0) + 1, last_reply_at: full.created_at };
    }
    return full;
  };
  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const page = (data: unknown[]) => ({ data, pagination: { next_cursor: null, has_more: false } });

  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (req.headers.authorization !== 'Bearer bot-key') return send(res, 401, { error: { code: 'unauthorized', message: 'bad key' } });
    const p = url.pathname.replace(/^\/api\/v1/, '');
    if (p === '/users/me') return send(res, 200, { data: BOT });
    if (p === '/channels') return send(res, 200, page([{ id: 'ch-1', name: 'general' }]));
    if (p === '/channels/ch-1/members') return send(res, 200, page([{ user_id: BOT.id }, { user_id: 'user-1' }]));
    if (p === '/channels/ch-1/messages' && req.method === 'GET') {
      const thread = url.searchParams.get('thread_id');
      const list = messages.filter((m) => (thread ? m.thread_id === thread : m.thread_id === null)).reverse();
      return send(res, 200, page(list));
    }
    if (p === '/channels/ch-1/messages' && req.method === 'POST') {
      let raw = '';
      for await (const chunk of req) raw += chunk;
      const body = JSON.parse(raw);
      const created = message({ id: `reply-${posted.length + 1}`, author_id: BOT.id, content: body.content, thread_id: body.thread_id ?? null });
      posted.push({ body, id: created.id });
      return send(res, 201, { data: created });
    }
    if (p === '/stream') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(`event: init\ndata: ${JSON.stringify({ type: 'init', presence: {}, user: BOT, workspace: { id: 'ws-1' } })}\n\n`);
      streams.push(res);
      return;
    }
    send(res, 404, { error: { code: 'not_found', message: `no route ${p}` } });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    message,
    posted,
    /** Sends message.created on the open stream, in CRLF framing with a comment line, as any SSE server may. */
    push(m: FakeMessage) {
      streams.at(-1)!.write(`: keep-alive\r\nevent: message.created\r\ndata: ${JSON.stringify({ type: 'message.created', message: m })}\r\n\r\n`);
    },
    dropStream() {
      streams.at(-1)!.end();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of streams) s.end();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

describe('the generated node bot', function () {
  this.timeout(60_000);

  it('answers mentions from the stream (in the thread when threaded), ignores itself, and catches up after a reconnect', async () => {
    const axid = await scriptedAxid();
    const files = (await withMcp({}, (c) => call(c, 'scaffold_bot_project', { bot_name: 'echo', target_runtime: 'node' }))).structuredContent!.files as Files;
    const dir = writeProject(files);
    const old = axid.message({ id: 'm0', content: '@echo from before the bot started' });
    const { child, output } = startBot(dir, { AXID_API_KEY: 'bot-key', AXID_BASE_URL: axid.url });
    try {
      await waitForLine(child, /connected: listening/, 15_000, output);

      axid.push(axid.message({ id: 'm1', content: '@echo hello there' }));
      await waitForLine(child, /replied to m1 /, 10_000, output);
      axid.push(axid.message({ id: 'm2', content: 'and you?', thread_id: 'm1', mentioned_user_ids: ['bot-1'] }));
      await waitForLine(child, /replied to m2 /, 10_000, output);
      axid.push(axid.message({ id: 'm3', content: '@echo talking to myself', author_id: 'bot-1' }));
      axid.push(axid.message({ id: 'm3b', content: 'no mention here' }));

      axid.dropStream();
      axid.message({ id: 'm4', content: '@ECHO are you still there?' });
      axid.message({ id: 'm5', content: 'in the gap, in a thread', thread_id: 'm1', mentioned_user_ids: ['bot-1'] });
      await waitForLine(child, /reconnected: caught up/, 15_000, output);

      const replies = Object.fromEntries(axid.posted.map((p) => [p.body.content, p.body.thread_id ?? null]));
      expect(axid.posted.map((p) => p.body.content), output.text).to.have.length(4);
      expect(replies['Hi! You said: "hello there"']).to.equal(null);
      expect(replies['Hi! You said: "and you?"']).to.equal('m1');
      expect(replies['Hi! You said: "are you still there?"']).to.equal(null);
      expect(replies['Hi! You said: "in the gap, in a thread"']).to.equal('m1');
      expect(output.text).not.to.match(/replied to (m0|m3|m3b) /);
      expect(old.id).to.equal('m0');
    } finally {
      await stop(child);
      await axid.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers a mention end to end against the real stack', async () => {
    const ws = await newWorkspace();
    const channel = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('bots') }), 201).data;
    const name = uniqueName('echo');
    const created = await withMcp({ AXID_API_KEY: ws.ownerKey, AXID_BASE_URL: stack().url }, async (c) => {
      const bot = (await call(c, 'setup_axid_bot', { name })).structuredContent!;
      const project = (await call(c, 'scaffold_bot_project', { bot_name: name, target_runtime: 'node' })).structuredContent!;
      return { bot, files: project.files as Files };
    });
    const botId = created.bot.bot_user_id as string;
    expectOk(await ws.owner.post(`/api/v1/channels/${channel.id}/members`, { user_id: botId }), 201);
    const dir = writeProject(created.files);
    const { child, output } = startBot(dir, { AXID_API_KEY: created.bot.api_key as string, AXID_BASE_URL: stack().url });
    try {
      await waitForLine(child, /connected: listening/, 20_000, output);
      const root = expectOk(await ws.owner.post(`/api/v1/channels/${channel.id}/messages`, { content: `@${name} ping` }), 201).data;
      const [, replyId] = await waitForLine(child, new RegExp(`replied to ${root.id} with (\\S+)`), 15_000, output);
      const reply = expectOk(await ws.owner.get(`/api/v1/channels/${channel.id}/messages/${replyId}`)).data;
      expect(reply).to.include({ author_id: botId, thread_id: null, content: 'Hi! You said: "ping"' });

      const mention = { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'mention', attrs: { id: botId, label: name } }, { type: 'text', text: ' again' }] }] };
      const threaded = expectOk(await ws.owner.post(`/api/v1/channels/${channel.id}/messages`, { content: 'again', content_json: mention, thread_id: root.id }), 201).data;
      const [, threadReplyId] = await waitForLine(child, new RegExp(`replied to ${threaded.id} with (\\S+)`), 15_000, output);
      const threadReply = expectOk(await ws.owner.get(`/api/v1/channels/${channel.id}/messages/${threadReplyId}`)).data;
      expect(threadReply).to.include({ author_id: botId, thread_id: root.id });
    } finally {
      await stop(child);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('streams its answer and answers a click on its actionId button at level 3, end to end', async () => {
    const s3 = await level3Stack();
    const ws = await newWorkspace(s3);
    const channel = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('bots') }), 201).data;
    const name = uniqueName('echo');
    const created = await withMcp({ AXID_API_KEY: ws.ownerKey, AXID_BASE_URL: s3.url }, async (c) => {
      const bot = (await call(c, 'setup_axid_bot', { name })).structuredContent!;
      const project = (await call(c, 'scaffold_bot_project', { bot_name: name, target_runtime: 'node' })).structuredContent!;
      return { bot, files: project.files as Files };
    });
    const botId = created.bot.bot_user_id as string;
    const botKey = created.bot.api_key as string;
    expectOk(await ws.owner.post(`/api/v1/channels/${channel.id}/members`, { user_id: botId }), 201);
    const dir = writeProject(created.files);
    const { child, output } = startBot(dir, { AXID_API_KEY: botKey, AXID_BASE_URL: s3.url });
    const watcher = await openRaw(s3.url, ws.ownerKey);
    try {
      await waitForLine(child, /connected: listening/, 20_000, output);
      const root = expectOk(await ws.owner.post(`/api/v1/channels/${channel.id}/messages`, { content: `@${name} tell me something long` }), 201).data;
      const [, replyId] = await waitForLine(child, new RegExp(`replied to ${root.id} with (\\S+)`), 15_000, output);
      const reply = expectOk(await ws.owner.get(`/api/v1/channels/${channel.id}/messages/${replyId}`)).data;
      expect(reply).to.include({ author_id: botId, content: 'Hi! You said: "tell me something long"', streaming: false });
      await watcher.waitFor((f) => f.event === 'message.updated' && f.data.message.id === replyId && f.data.message.streaming === false);
      // Appends reach a stream before the finish (commit order).
      expect(watcher.frames.filter((f) => f.event === 'message.appended' && f.data.message_id === replyId).length).to.be.greaterThan(0);

      // The bot posts buttons; a person clicks one; the bot answers the click.
      const buttons = { type: 'doc', content: [{ type: 'block_button_group', attrs: { blockName: 'button_group', version: 1, props: { buttons: [{ label: 'Approve', actionId: 'approve' }] } } }] };
      const card = await fetch(`${s3.url}/api/v1/channels/${channel.id}/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${botKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ content: 'Deploy?', content_json: buttons }),
      }).then((r) => r.json() as Promise<{ data: { id: string } }>);
      const click = expectOk(await ws.owner.post('/api/v1/interactions/actions', { message_id: card.data.id, action_id: 'approve' }), 202).data;
      const [, answerId] = await waitForLine(child, new RegExp(`answered click ${click.id} with (\\S+)`), 15_000, output);
      const answer = expectOk(await ws.owner.get(`/api/v1/channels/${channel.id}/messages/${answerId}`)).data;
      expect(answer).to.include({ author_id: botId, content: 'Button "approve" clicked.' });
    } finally {
      watcher.close();
      await stop(child);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('at level 3: shows its status while it works, declares /deploy, answers it ephemerally and deploys only once approved, end to end', async () => {
    const s3 = await level3Stack();
    const ws = await newWorkspace(s3);
    const channel = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('bots') }), 201).data;
    const name = uniqueName('deployer');
    const created = await withMcp({ AXID_API_KEY: ws.ownerKey, AXID_BASE_URL: s3.url }, async (c) => {
      const bot = (await call(c, 'setup_axid_bot', { name })).structuredContent!;
      const project = (await call(c, 'scaffold_bot_project', { bot_name: name, target_runtime: 'node' })).structuredContent!;
      return { bot, files: project.files as Files };
    });
    const botId = created.bot.bot_user_id as string;
    const person = await ws.user();
    for (const id of [botId, person.id]) expectOk(await ws.owner.post(`/api/v1/channels/${channel.id}/members`, { user_id: id }), 201);
    const dir = writeProject(created.files);
    const { child, output } = startBot(dir, { AXID_API_KEY: created.bot.api_key as string, AXID_BASE_URL: s3.url });
    const personStream = await openRaw(s3.url, person.key);
    const ownerStream = await openRaw(s3.url, ws.ownerKey);
    try {
      await waitForLine(child, /declared commands: \/deploy/, 20_000, output);
      await waitForLine(child, /connected: listening/, 20_000, output);
      const commands = expectOk(await person.client.get('/api/v1/commands')).data;
      expect(commands).to.deep.equal([{ name: 'deploy', description: 'Deploy a branch (pretend), once approved', usage: '/deploy <branch>', user_id: botId }]);

      // A mention: the status shows while it thinks, and its reply clears it.
      const root = expectOk(await person.client.post(`/api/v1/channels/${channel.id}/messages`, { content: `@${name} hello` }), 201).data;
      await waitForLine(child, new RegExp(`replied to ${root.id} with`), 15_000, output);
      const thinking = await personStream.waitFor((f) => f.event === 'agent.status' && f.data.status === 'is thinking…');
      expect(thinking.data).to.include({ conversation_id: channel.id, user_id: botId, thread_id: null });
      await personStream.waitFor((f) => f.event === 'agent.status' && f.data.status === '' && f.data.user_id === botId);

      // The command: an ephemeral answer to the person alone, then an approval request only they may answer.
      expectOk(await person.client.post('/api/v1/commands/invoke', { conversation_id: channel.id, command: 'deploy', text: 'staging' }), 202);
      const [, requestId] = await waitForLine(child, /asked for approval (\S+) for command/, 15_000, output);
      const ephemeral = await personStream.waitFor((f) => f.event === 'message.ephemeral');
      expect(ephemeral.data.message).to.include({ author_id: botId, channel_id: channel.id, ephemeral: true, content: 'Deploying staging needs your approval: I asked for it here.' });
      const request = expectOk(await person.client.get(`/api/v1/channels/${channel.id}/messages/${requestId}`)).data;
      const props = request.content_json.content[1].attrs.props;
      expect(props).to.include({ title: 'Deploy staging?', approve_label: 'Deploy', deny_label: 'Cancel' });
      expect(props.approver_ids).to.deep.equal([person.id]);
      expect(request.mentioned_user_ids).to.deep.equal([person.id]);
      expect(output.text).not.to.match(/deployed staging/);

      // The owner may not answer it; the person approves; the bot deploys, showing its status, and reports.
      expectError(await ws.owner.post('/api/v1/interactions/approvals', { message_id: requestId, decision: 'approve' }), 403, 'forbidden');
      expectOk(await person.client.post('/api/v1/interactions/approvals', { message_id: requestId, decision: 'approve' }));
      const [, doneId] = await waitForLine(child, /deployed staging: (\S+)/, 15_000, output);
      const deploying = await personStream.waitFor((f) => f.event === 'agent.status' && f.data.status === 'is deploying staging…');
      expect(deploying.data.loading_messages).to.deep.equal(['Building', 'Uploading', 'Switching traffic']);
      const done = expectOk(await person.client.get(`/api/v1/channels/${channel.id}/messages/${doneId}`)).data;
      expect(done).to.include({ author_id: botId, content: 'Deployed staging' });
      expect(done.content_json.content[1].type).to.equal('block_feedback_buttons');
      // The ephemeral answer went to the person alone.
      await ownerStream.waitFor((f) => f.event === 'message.created' && f.data.message.id === doneId);
      expect(ownerStream.events('message.ephemeral')).to.have.length(0);
    } finally {
      personStream.close();
      ownerStream.close();
      await stop(child);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
