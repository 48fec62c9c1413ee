// An agent's working status and ephemeral messages (level 3, contract §15):
// live events only, to exactly the people they are for, never stored.
import { expect } from 'chai';
import { expectError, expectOk } from '../support/expect.js';
import { openRaw, type RawStream } from '../support/sse.js';
import { level3Stack, newWorkspace, uniqueName, type TestWorkspace } from '../support/stack.js';
import type { Client } from '../support/client.js';

describe('Agents at home: working status and ephemeral messages (level 3)', () => {
  const open: RawStream[] = [];
  afterEach(() => {
    for (const s of open.splice(0)) s.close();
  });
  let ws: TestWorkspace;
  let url: string;

  beforeEach(async () => {
    const s = await level3Stack();
    url = s.url;
    ws = await newWorkspace(s);
  });

  async function channel(client: Client, members: string[], isPrivate = true) {
    const id = expectOk(await client.post('/api/v1/channels', { name: uniqueName('c'), is_private: isPrivate }), 201).data.id as string;
    for (const user_id of members) expectOk(await client.post(`/api/v1/channels/${id}/members`, { user_id }), 201);
    return id;
  }

  async function stream(key: string) {
    const s = await openRaw(url, key);
    open.push(s);
    return s;
  }

  describe('POST /channels/:id/status', () => {
    it('sends agent.status to the readers of the conversation only, ending 2 minutes on (expires_at)', async () => {
      const bot = await ws.user({ is_agent: true });
      const reader = await ws.user();
      const outsider = await ws.user();
      const channelId = await channel(bot.client, [reader.id]);
      const elsewhere = await channel(bot.client, [outsider.id], false);
      const readerStream = await stream(reader.key);
      const outsiderStream = await stream(outsider.key);

      const before = Date.now();
      const res = await bot.client.post(`/api/v1/channels/${channelId}/status`, { status: 'is reading the logs…', loading_messages: ['Reading', 'Thinking'] });
      const status = expectOk(res).data;
      expect(status).to.include({ conversation_id: channelId, thread_id: null, user_id: bot.id, status: 'is reading the logs…' });
      expect(status.loading_messages).to.deep.equal(['Reading', 'Thinking']);
      const expiresAt = Date.parse(status.expires_at);
      expect(expiresAt).to.be.within(before + 120_000, Date.now() + 120_000);

      const frame = await readerStream.waitFor((f) => f.event === 'agent.status');
      expect(frame.data).to.deep.equal({ type: 'agent.status', ...status });
      // A later status where the outsider reads: by then the first would have reached them too.
      expectOk(await bot.client.post(`/api/v1/channels/${elsewhere}/status`, { status: 'elsewhere' }));
      await outsiderStream.waitFor((f) => f.event === 'agent.status' && f.data.status === 'elsewhere');
      expect(outsiderStream.events('agent.status').filter((f) => f.data.conversation_id === channelId)).to.have.length(0);
      // Not stored: nothing in the history.
      const history = expectOk(await reader.client.get(`/api/v1/channels/${channelId}/messages`)).data;
      expect(history).to.have.length(0);
    });

    it('ends when the agent posts in that thread: a clearing agent.status (status ""), and "" clears it too', async () => {
      const bot = await ws.user({ is_agent: true });
      const reader = await ws.user();
      const channelId = await channel(bot.client, [reader.id]);
      const root = expectOk(await reader.client.post(`/api/v1/channels/${channelId}/messages`, { content: 'help?' }), 201).data;
      const readerStream = await stream(reader.key);
      expectOk(await bot.client.post(`/api/v1/channels/${channelId}/status`, { thread_id: root.id, status: 'is thinking' }));
      await readerStream.waitFor((f) => f.event === 'agent.status' && f.data.status === 'is thinking');
      expectOk(await bot.client.post(`/api/v1/channels/${channelId}/messages`, { content: 'here', thread_id: root.id }), 201);
      const cleared = await readerStream.waitFor((f) => f.event === 'agent.status' && f.data.status === '');
      expect(cleared.data).to.include({ conversation_id: channelId, thread_id: root.id, user_id: bot.id, status: '' });
      expect(cleared.data.loading_messages).to.deep.equal([]);

      const empty = expectOk(await bot.client.post(`/api/v1/channels/${channelId}/status`, { status: '' })).data;
      expect(empty).to.include({ status: '', thread_id: null });
      await readerStream.waitForCount((f) => f.event === 'agent.status' && f.data.status === '' && f.data.thread_id === null, 1);
    });

    it('is for agent members: 403 for a person and for an agent outside a public channel, 404 hidden, 400 for bad input', async () => {
      const bot = await ws.user({ is_agent: true });
      const other = await ws.user({ is_agent: true });
      const person = await ws.user();
      const pub = await channel(bot.client, [person.id], false);
      const priv = await channel(bot.client, []);
      expectError(await person.client.post(`/api/v1/channels/${pub}/status`, { status: 'x' }), 403, 'forbidden');
      expectError(await other.client.post(`/api/v1/channels/${pub}/status`, { status: 'x' }), 403, 'forbidden');
      expectError(await other.client.post(`/api/v1/channels/${priv}/status`, { status: 'x' }), 404, 'not_found');
      expectError(await bot.client.post(`/api/v1/channels/${pub}/status`, { status: 'x'.repeat(101) }), 400, 'validation_error');
      expectError(await bot.client.post(`/api/v1/channels/${pub}/status`, { status: 'x', loading_messages: Array(11).fill('a') }), 400, 'validation_error');
      expectError(await bot.client.post(`/api/v1/channels/${pub}/status`, { status: 'x', thread_id: '00000000-0000-4000-8000-000000000000' }), 400, 'validation_error');
    });

    it('works under /dms/:id', async () => {
      const bot = await ws.user({ is_agent: true });
      const person = await ws.user();
      const dm = expectOk(await person.client.post('/api/v1/dms', { user_ids: [bot.id] }), 201).data;
      const personStream = await stream(person.key);
      expectOk(await bot.client.post(`/api/v1/dms/${dm.id}/status`, { status: 'typing a plan' }));
      const frame = await personStream.waitFor((f) => f.event === 'agent.status');
      expect(frame.data).to.include({ conversation_id: dm.id, status: 'typing a plan' });
    });
  });

  describe('POST /channels/:id/ephemeral', () => {
    it('reaches only its person, as message.ephemeral, and is in no list, search or replay', async () => {
      const bot = await ws.user({ is_agent: true });
      const target = await ws.user();
      const bystander = await ws.user();
      const channelId = await channel(bot.client, [target.id, bystander.id]);
      const targetStream = await stream(target.key);
      const bystanderStream = await stream(bystander.key);
      const botStream = await stream(bot.key);

      const word = `secretword${Date.now()}`;
      const message = expectOk(await bot.client.post(`/api/v1/channels/${channelId}/ephemeral`, { user_id: target.id, content: `only you: ${word}` })).data;
      expect(message).to.include({ channel_id: channelId, author_id: bot.id, content: `only you: ${word}`, ephemeral: true });
      const frame = await targetStream.waitFor((f) => f.event === 'message.ephemeral');
      expect(frame.data).to.deep.equal({ type: 'message.ephemeral', message });

      // A later ephemeral to the bystander: by then the first would have reached them too.
      expectOk(await bot.client.post(`/api/v1/channels/${channelId}/ephemeral`, { user_id: bystander.id, content: 'yours' }));
      await bystanderStream.waitFor((f) => f.event === 'message.ephemeral');
      expect(bystanderStream.events('message.ephemeral').map((f) => f.data.message.content)).to.deep.equal(['yours']);
      expect(botStream.events('message.ephemeral')).to.have.length(0);

      for (const client of [target.client, bot.client]) {
        expect(expectOk(await client.get(`/api/v1/channels/${channelId}/messages`)).data).to.have.length(0);
        expectError(await client.get(`/api/v1/channels/${channelId}/messages/${message.id}`), 404, 'not_found');
        expect(expectOk(await client.get(`/api/v1/search/messages?q=${word}`)).data).to.have.length(0);
      }
      // A stream resumed from before it replays the durable events only.
      const first = targetStream.frames[0]!;
      expect(first.id, 'the init frame carries the id to resume from').to.be.a('string');
      const resumed = await openRaw(url, target.key, { headers: { 'last-event-id': first.id! } });
      open.push(resumed);
      expectOk(await bot.client.post(`/api/v1/channels/${channelId}/messages`, { content: 'marker' }), 201);
      await resumed.waitFor((f) => f.event === 'message.created' && f.data.message.content === 'marker');
      expect(resumed.events('message.ephemeral')).to.have.length(0);
      expect(await (await level3Stack()).rt.db('messages').where({ id: message.id }).first()).to.equal(undefined);
    });

    it('is from an agent member to a member: 403 for a person, 400 for a user outside the conversation', async () => {
      const bot = await ws.user({ is_agent: true });
      const member = await ws.user();
      const outsider = await ws.user();
      const channelId = await channel(bot.client, [member.id]);
      expectError(await member.client.post(`/api/v1/channels/${channelId}/ephemeral`, { user_id: bot.id, content: 'x' }), 403, 'forbidden');
      expectError(await bot.client.post(`/api/v1/channels/${channelId}/ephemeral`, { user_id: outsider.id, content: 'x' }), 400, 'validation_error');
      expectError(await bot.client.post(`/api/v1/channels/${channelId}/ephemeral`, { user_id: 'nope', content: 'x' }), 400, 'validation_error');
      expectError(await bot.client.post(`/api/v1/channels/${channelId}/ephemeral`, { user_id: member.id, content: '  ' }), 400, 'validation_error');
    });
  });
});
