// Slash commands (level 3, contract §15): agents declare them, members of a
// conversation the agent is in invoke them, and command.invoked reaches the
// agent alone: its streams and its event subscriptions. A stack of its own
// with receivers on loopback allowed (test/support/receiver.ts).
import { expect } from 'chai';
import type { Stack } from '../../services/stack.js';
import { serverLevels } from '../support/client.js';
import { expectError, expectOk } from '../support/expect.js';
import { separateStack } from '../support/separate-stack.js';
import { openRaw, type RawStream } from '../support/sse.js';
import { FAST_DELIVERY, startReceiver, type Receiver } from '../support/receiver.js';
import { newWorkspace, uniqueName, type TestWorkspace } from '../support/stack.js';

describe('Slash commands (level 3)', function () {
  this.timeout(30_000);
  let s: Stack;
  let stop: () => Promise<void>;
  let ws: TestWorkspace;
  const receivers: Receiver[] = [];
  const streams: RawStream[] = [];

  before(async () => {
    const started = await separateStack(FAST_DELIVERY);
    s = started.stack;
    stop = started.stop;
    serverLevels.set(s.url, '3');
  });
  after(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    serverLevels.delete(s.url);
    await stop();
  });
  beforeEach(async () => {
    ws = await newWorkspace(s);
  });
  afterEach(() => {
    for (const x of streams.splice(0)) x.close();
  });

  const stream = async (key: string) => {
    const x = await openRaw(s.url, key);
    streams.push(x);
    return x;
  };

  describe('PUT /users/me/commands, GET /commands', () => {
    it('declares an agent’s commands, lists every agent’s, and refuses a name another agent holds with 409 name_taken', async () => {
      const deploy = await ws.user({ is_agent: true });
      const other = await ws.user({ is_agent: true });
      const declared = expectOk(await deploy.client.put('/api/v1/users/me/commands', [{ name: 'deploy', description: 'Deploy a branch', usage: '/deploy <branch>' }, { name: 'status', description: 'What runs where' }])).data;
      expect(declared).to.deep.equal([
        { name: 'deploy', description: 'Deploy a branch', usage: '/deploy <branch>', user_id: deploy.id },
        { name: 'status', description: 'What runs where', usage: null, user_id: deploy.id },
      ]);
      expectError(await other.client.put('/api/v1/users/me/commands', [{ name: 'deploy', description: 'mine' }]), 409, 'name_taken');
      expectOk(await other.client.put('/api/v1/users/me/commands', [{ name: 'triage', description: 'Triage an issue' }]));
      const all = expectOk(await ws.owner.get('/api/v1/commands')).data;
      expect(all.map((c: { name: string }) => c.name)).to.deep.equal(['deploy', 'status', 'triage']);
      // A PUT replaces: the agent's other commands go, its name is free again.
      expectOk(await deploy.client.put('/api/v1/users/me/commands', [{ name: 'status', description: 'What runs where' }]));
      expectOk(await other.client.put('/api/v1/users/me/commands', [{ name: 'triage', description: 'Triage' }, { name: 'deploy', description: 'now mine' }]));
      // Another workspace's commands are its own.
      const elsewhere = await newWorkspace(s);
      expect(expectOk(await elsewhere.owner.get('/api/v1/commands')).data).to.deep.equal([]);
      const page = expectOk(await ws.owner.get('/api/v1/commands?limit=2'));
      expect(page.data).to.have.length(2);
      expect(expectOk(await ws.owner.get(`/api/v1/commands?limit=2&cursor=${page.pagination.next_cursor}`)).data).to.have.length(1);
      // A removed agent's commands are no longer listed, and their names are free.
      const res = await ws.owner.delete(`/api/v1/workspaces/current/members/${other.id}`);
      expect(res.status).to.equal(204);
      expect(expectOk(await ws.owner.get('/api/v1/commands')).data.map((c: { name: string }) => c.name)).to.deep.equal(['status']);
      expectOk(await deploy.client.put('/api/v1/users/me/commands', [{ name: 'status', description: 'x' }, { name: 'deploy', description: 'mine again' }]));
    });

    it('refuses people, bad names, /remind, duplicates and more than 50 commands, changing nothing', async () => {
      const bot = await ws.user({ is_agent: true });
      expectOk(await bot.client.put('/api/v1/users/me/commands', [{ name: 'keep', description: 'kept' }]));
      expectError(await ws.owner.put('/api/v1/users/me/commands', [{ name: 'mine', description: 'x' }]), 403, 'forbidden');
      for (const name of ['', 'Deploy', 'de ploy', 'x'.repeat(33), 'dé', 'remind', '/deploy']) {
        expectError(await bot.client.put('/api/v1/users/me/commands', [{ name, description: 'x' }]), 400, 'validation_error');
      }
      expectError(await bot.client.put('/api/v1/users/me/commands', [{ name: 'a', description: 'x' }, { name: 'a', description: 'y' }]), 400, 'validation_error');
      const many = Array.from({ length: 51 }, (_, i) => ({ name: `c${i}`, description: 'x' }));
      expectError(await bot.client.put('/api/v1/users/me/commands', many), 400, 'validation_error');
      expectOk(await bot.client.put('/api/v1/users/me/commands', many.slice(0, 50)));
      expect(expectOk(await ws.owner.get('/api/v1/commands?limit=200')).data).to.have.length(50);
    });
  });

  describe('POST /commands/invoke', () => {
    it('answers 202 {id} and sends command.invoked to the agent’s streams and event subscription only', async () => {
      const bot = await ws.user({ is_agent: true });
      const bystanderBot = await ws.user({ is_agent: true });
      const person = await ws.user();
      const channelId = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('c') }), 201).data.id;
      for (const u of [bot, bystanderBot, person]) expectOk(await ws.owner.post(`/api/v1/channels/${channelId}/members`, { user_id: u.id }), 201);
      expectOk(await bot.client.put('/api/v1/users/me/commands', [{ name: 'deploy', description: 'Deploy' }]));
      const botReceiver = await startReceiver();
      const otherReceiver = await startReceiver();
      receivers.push(botReceiver, otherReceiver);
      expectOk(await bot.client.post('/api/v1/event-subscriptions', { url: botReceiver.url, events: ['command.invoked'] }), 201);
      expectOk(await bystanderBot.client.post('/api/v1/event-subscriptions', { url: otherReceiver.url }), 201);
      const botStream = await stream(bot.key);
      const personStream = await stream(person.key);
      const otherStream = await stream(bystanderBot.key);

      const res = await person.client.post('/api/v1/commands/invoke', { conversation_id: channelId, command: '/deploy', text: 'main to staging' });
      const { id } = expectOk(res, 202).data;
      const frame = await botStream.waitFor((f) => f.event === 'command.invoked');
      expect(frame.data).to.include({ type: 'command.invoked', id, command: 'deploy', text: 'main to staging', user_id: person.id, conversation_id: channelId, thread_id: null });
      expect(Date.parse(frame.data.created_at)).to.be.closeTo(Date.now(), 60_000);
      const [delivery] = await botReceiver.waitFor(1, (d) => d.body.type === 'command.invoked');
      expect(delivery!.body.data).to.include({ id, command: 'deploy', user_id: person.id });

      // A later event all of them get: by then the command would have reached them too.
      expectOk(await ws.owner.post(`/api/v1/channels/${channelId}/messages`, { content: 'after' }), 201);
      for (const x of [personStream, otherStream]) {
        await x.waitFor((f) => f.event === 'message.created' && f.data.message.content === 'after');
        expect(x.events('command.invoked')).to.have.length(0);
      }
      await otherReceiver.waitFor(1, (d) => d.body.type === 'message.created' && d.body.data.message.content === 'after');
      expect(otherReceiver.deliveries.filter((d) => d.body.type === 'command.invoked')).to.have.length(0);
    });

    it('answers 404 not_found to a non-member, for a conversation the agent is not in, and for an unknown command', async () => {
      const bot = await ws.user({ is_agent: true });
      const member = await ws.user();
      const outsider = await ws.user();
      const withBot = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('c') }), 201).data.id;
      const withoutBot = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('c') }), 201).data.id;
      for (const u of [bot, member]) expectOk(await ws.owner.post(`/api/v1/channels/${withBot}/members`, { user_id: u.id }), 201);
      expectOk(await ws.owner.post(`/api/v1/channels/${withoutBot}/members`, { user_id: member.id }), 201);
      expectOk(await bot.client.put('/api/v1/users/me/commands', [{ name: 'deploy', description: 'Deploy' }]));
      const botStream = await stream(bot.key);
      expectError(await outsider.client.post('/api/v1/commands/invoke', { conversation_id: withBot, command: 'deploy', text: '' }), 404, 'not_found');
      expectError(await member.client.post('/api/v1/commands/invoke', { conversation_id: withoutBot, command: 'deploy', text: '' }), 404, 'not_found');
      expectError(await member.client.post('/api/v1/commands/invoke', { conversation_id: withBot, command: 'nope', text: '' }), 404, 'not_found');
      expectError(await member.client.post('/api/v1/commands/invoke', { conversation_id: 'not-a-uuid', command: 'deploy', text: '' }), 404, 'not_found');
      expectError(await member.client.post('/api/v1/commands/invoke', { conversation_id: withBot, command: 'deploy' }), 400, 'validation_error');
      expectOk(await member.client.post('/api/v1/commands/invoke', { conversation_id: withBot, command: 'deploy', text: 'the one' }), 202);
      await botStream.waitFor((f) => f.event === 'command.invoked');
      expect(botStream.events('command.invoked').map((f) => f.data.text)).to.deep.equal(['the one']);
    });
  });
});
