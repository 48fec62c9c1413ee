// docs/bots.md's receiver, run as written (`node receiver.mjs`) against a
// running level-3 service: it answers the challenge, gets a message signed
// with the secret, logs a repeated id as a duplicate, and refuses a forged
// or stale signature with 401.
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../shared/embedded.js';
import type { Stack } from '../../services/stack.js';
import { serverLevels } from '../support/client.js';
import { expectOk } from '../support/expect.js';
import { codeBlocks } from '../support/markdown.js';
import { waitForLine } from '../support/mcp.js';
import { FAST_DELIVERY } from '../support/receiver.js';
import { separateStack } from '../support/separate-stack.js';
import { level3Stack, newWorkspace, uniqueName } from '../support/stack.js';
import { openRaw } from '../support/sse.js';

const sign = (secret: string, t: number, body: string) => `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;

describe('docs/bots.md: the Node receiver', function () {
  this.timeout(60_000);
  let s: Stack;
  let stop: () => Promise<void>;
  let dir: string;
  const children: ChildProcess[] = [];

  before(async () => {
    const started = await separateStack(FAST_DELIVERY);
    s = started.stack;
    stop = started.stop;
    serverLevels.set(s.url, '3');
    dir = mkdtempSync(path.join(os.tmpdir(), 'axid-bots-doc-'));
  });
  after(async () => {
    for (const child of children) {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
    }
    serverLevels.delete(s.url);
    await stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function run(port: number, secret?: string) {
    const output = { text: '' };
    const child = spawn(process.execPath, ['receiver.mjs'], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', PORT: String(port), ...(secret ? { AXID_SIGNING_SECRET: secret } : {}) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    child.stdout!.on('data', (c: Buffer) => (output.text += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (output.text += c.toString()));
    await waitForLine(child, /listening/, 15_000, output);
    return { child, output };
  }

  async function end(child: ChildProcess) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }

  it('runs as documented: challenge, a signed message, a duplicate ignored, forged and stale refused', async () => {
    const [block] = codeBlocks('docs/bots.md').filter((b) => b.lang === 'js' && b.code.startsWith('// receiver.mjs'));
    expect(block, 'the receiver block in docs/bots.md').to.not.equal(undefined);
    writeFileSync(path.join(dir, 'receiver.mjs'), block!.code);
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/axid`;

    // First without a secret: only the challenge is answered.
    const first = await run(port);
    const ws = await newWorkspace(s);
    const bot = await ws.user({ is_agent: true });
    const sub = expectOk(await bot.client.post('/api/v1/event-subscriptions', { url, events: ['message.created'] }), 201).data;
    await end(first.child);

    // Then with the secret, as the page says.
    const { child, output } = await run(port, sub.secret);
    const channel = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('doc').slice(0, 60) }), 201).data;
    expectOk(await ws.owner.post(`/api/v1/channels/${channel.id}/members`, { user_id: bot.id }), 201);
    const message = expectOk(await ws.owner.post(`/api/v1/channels/${channel.id}/messages`, { content: 'hello receiver' }), 201).data;
    const [, eventId] = await waitForLine(child, new RegExp(`message (\\S+) ${message.id}: hello receiver`), 15_000, output);

    // The same event again (as after a lost answer): logged as a duplicate, acted on once.
    const now = Math.floor(Date.now() / 1000);
    const again = JSON.stringify({ id: eventId, type: 'message.created', created_at: new Date().toISOString(), subscription_id: sub.id, data: { type: 'message.created', message } });
    const post = (body: string, signature?: string) =>
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...(signature ? { 'axid-signature': signature } : {}) }, body });
    expect((await post(again, sign(sub.secret, now, again))).status).to.equal(200);
    await waitForLine(child, new RegExp(`duplicate ${eventId}`), 10_000, output);

    const forged = again.replace('hello receiver', 'forged');
    expect((await post(forged, sign(`axsec_${'z'.repeat(43)}`, now, forged))).status).to.equal(401);
    expect((await post(forged, sign(sub.secret, now - 301, forged))).status).to.equal(401);
    expect((await post(forged, sign(sub.secret, now, again))).status).to.equal(401);
    expect((await post(forged)).status).to.equal(401);
    expect(output.text).not.to.include('forged');
    expect(output.text.match(new RegExp(`message ${eventId} `, 'g'))).to.have.length(1);
  });
});

describe('docs/bots.md: agents at home, run as written', function () {
  this.timeout(60_000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'axid-agents-doc-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('sets prompts, a command, a status, an ephemeral message, feedback buttons with a mention and an approval request', async () => {
    const [block] = codeBlocks('docs/bots.md').filter((b) => b.lang === 'js' && b.code.startsWith('// agent-at-home.mjs'));
    expect(block, 'the agent-at-home block in docs/bots.md').to.not.equal(undefined);
    writeFileSync(path.join(dir, 'agent-at-home.mjs'), block!.code);
    const s3 = await level3Stack();
    const ws = await newWorkspace(s3);
    const bot = await ws.user({ is_agent: true });
    const person = await ws.user();
    const channel = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('doc').slice(0, 60) }), 201).data;
    for (const id of [bot.id, person.id]) expectOk(await ws.owner.post(`/api/v1/channels/${channel.id}/members`, { user_id: id }), 201);
    const personStream = await openRaw(s3.url, person.key);
    const output = { text: '' };
    const child = spawn(process.execPath, ['agent-at-home.mjs'], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', AXID_API_KEY: bot.key, AXID_BASE_URL: s3.url, AXID_CHANNEL_ID: channel.id, AXID_PERSON_ID: person.id },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      child.stdout!.on('data', (c: Buffer) => (output.text += c.toString()));
      child.stderr!.on('data', (c: Buffer) => (output.text += c.toString()));
      const [, requestId] = await waitForLine(child, /approval (\S+)/, 20_000, output);
      const answerId = /answer (\S+)/.exec(output.text)![1]!;
      expect(output.text).to.match(/status until \d{4}-/);

      expect(expectOk(await person.client.get(`/api/v1/users/${bot.id}`)).data.suggested_prompts).to.deep.equal([{ title: 'Deploy status', message: 'What is deployed where?' }]);
      expect(expectOk(await person.client.get('/api/v1/commands')).data.map((c: { name: string }) => c.name)).to.deep.equal(['deploy']);
      await personStream.waitFor((f) => f.event === 'agent.status' && f.data.status === 'is reading the logs…');
      await personStream.waitFor((f) => f.event === 'message.ephemeral' && f.data.message.content === 'Only you can see this.');
      await personStream.waitFor((f) => f.event === 'agent.status' && f.data.status === '');
      const answer = expectOk(await person.client.get(`/api/v1/channels/${channel.id}/messages/${answerId}`)).data;
      expect(answer.mentioned_user_ids).to.deep.equal([person.id]);
      expect(expectOk(await person.client.post('/api/v1/interactions/feedback', { message_id: answerId, value: 'positive' })).data.counts).to.deep.equal({ positive: 1, negative: 0 });
      expect(expectOk(await person.client.post('/api/v1/interactions/approvals', { message_id: requestId, decision: 'approve' })).data.decision).to.equal('approve');
    } finally {
      personStream.close();
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    }
  });
});
