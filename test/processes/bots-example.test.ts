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
import { newWorkspace, uniqueName } from '../support/stack.js';

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
