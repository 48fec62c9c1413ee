// Button actions (level 3, contract §9): a reader clicks an actionId button;
// the click is answered 202, kept, and told to the message's author only.
import { expect } from 'chai';
import { expectError, expectOk } from '../support/expect.js';
import { openRaw, type RawStream } from '../support/sse.js';
import { level3Stack, newWorkspace, uniqueName, type TestWorkspace } from '../support/stack.js';
import type { Client } from '../support/client.js';
import { driverQueries } from '../support/queries.js';

const buttons = (...actionIds: string[]) => ({
  type: 'doc',
  content: [
    { type: 'paragraph', content: [{ type: 'text', text: 'Deploy?' }] },
    {
      type: 'block_button_group',
      attrs: { blockName: 'button_group', version: 1, props: { buttons: actionIds.map((actionId) => ({ label: actionId, actionId })) } },
    },
  ],
});

describe('POST /api/v1/interactions/actions (level 3)', () => {
  const open: RawStream[] = [];
  afterEach(() => {
    for (const s of open.splice(0)) s.close();
  });
  let ws: TestWorkspace;
  let url: string;

  async function channel(client: Client, isPrivate = false) {
    return expectOk(await client.post('/api/v1/channels', { name: uniqueName('c'), is_private: isPrivate }), 201).data.id as string;
  }

  beforeEach(async () => {
    const s = await level3Stack();
    url = s.url;
    ws = await newWorkspace(s);
  });

  it('answers 202 with the interaction and sends interaction.action to the author’s streams only', async () => {
    const bot = await ws.user({ is_agent: true });
    const reader = await ws.user();
    const bystander = await ws.user();
    const channelId = await channel(bot.client);
    for (const u of [reader, bystander]) expectOk(await u.client.post(`/api/v1/channels/${channelId}/members`, { user_id: u.id }), 201);
    const message = expectOk(await bot.client.post(`/api/v1/channels/${channelId}/messages`, { content: 'Deploy?', content_json: buttons('approve', 'reject') }), 201).data;

    const botStream = await openRaw(url, bot.key);
    const botSecond = await openRaw(url, bot.key);
    const otherStream = await openRaw(url, bystander.key);
    const clickerStream = await openRaw(url, reader.key);
    open.push(botStream, botSecond, otherStream, clickerStream);

    const res = await reader.client.post('/api/v1/interactions/actions', { message_id: message.id, action_id: 'approve' });
    const interaction = expectOk(res, 202).data;
    expect(interaction).to.include({ message_id: message.id, channel_id: channelId, action_id: 'approve', user_id: reader.id });
    expect(interaction.id).to.be.a('string');
    expect(Date.parse(interaction.created_at)).to.be.closeTo(Date.now(), 60_000);

    for (const s of [botStream, botSecond]) {
      const frame = await s.waitFor((f) => f.event === 'interaction.action');
      expect(frame.data).to.deep.equal({ type: 'interaction.action', interaction });
    }
    // A later event reaches the others: by then the click would have too.
    expectOk(await bot.client.post(`/api/v1/channels/${channelId}/messages`, { content: 'after' }), 201);
    for (const s of [otherStream, clickerStream]) {
      await s.waitFor((f) => f.event === 'message.created' && f.data.message.content === 'after');
      expect(s.events('interaction.action')).to.have.length(0);
    }
    const kept = await (await level3Stack()).rt.db('interactions').where({ id: interaction.id }).first();
    expect(kept).to.include({ action_id: 'approve', user_id: reader.id, message_id: message.id });
  });

  it('answers 400 validation_error for an action_id no button of the message has (and for a message without buttons)', async () => {
    const channelId = await channel(ws.owner);
    const withButtons = expectOk(await ws.owner.post(`/api/v1/channels/${channelId}/messages`, { content: 'x', content_json: buttons('go') }), 201).data;
    const plain = expectOk(await ws.owner.post(`/api/v1/channels/${channelId}/messages`, { content: 'plain' }), 201).data;
    for (const [messageId, actionId] of [[withButtons.id, 'stop'], [withButtons.id, 'Go'], [withButtons.id, 'go '], [plain.id, 'go']]) {
      expectError(await ws.owner.post('/api/v1/interactions/actions', { message_id: messageId, action_id: actionId }), 400, 'validation_error');
    }
    expectError(await ws.owner.post('/api/v1/interactions/actions', { message_id: withButtons.id }), 400, 'validation_error');
    expectError(await ws.owner.post('/api/v1/interactions/actions', { message_id: withButtons.id, action_id: 'go', extra: 1 }), 400, 'validation_error');
  });

  it('answers 404 not_found for a hidden message (private channel, DM, other workspace), an unknown one and a malformed id, as for a missing one', async () => {
    const outsider = await ws.user();
    const member = await ws.user();
    const privateId = await channel(ws.owner, true);
    const inPrivate = expectOk(await ws.owner.post(`/api/v1/channels/${privateId}/messages`, { content: 'x', content_json: buttons('go') }), 201).data;
    const dm = expectOk(await ws.owner.post('/api/v1/dms', { user_ids: [member.id] }), 201).data;
    const inDm = expectOk(await ws.owner.post(`/api/v1/dms/${dm.id}/messages`, { content: 'x', content_json: buttons('go') }), 201).data;
    const other = await newWorkspace(await level3Stack());
    const otherChannel = await channel(other.owner);
    const elsewhere = expectOk(await other.owner.post(`/api/v1/channels/${otherChannel}/messages`, { content: 'x', content_json: buttons('go') }), 201).data;
    for (const id of [inPrivate.id, inDm.id, elsewhere.id, '00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const res = await outsider.client.post('/api/v1/interactions/actions', { message_id: id, action_id: 'go' });
      expectError(res, 404, 'not_found');
      expect(res.body.error.message).to.equal('Message not found');
    }
    // The DM's member may click.
    expectOk(await member.client.post('/api/v1/interactions/actions', { message_id: inDm.id, action_id: 'go' }), 202);
  });

  it('limits clicks per person and message: of 300 in a burst, 10 are kept and reach the bot, the rest answer 429 rate_limited with Retry-After', async () => {
    const bot = await ws.user({ is_agent: true });
    const reader = await ws.user();
    const other = await ws.user();
    const channelId = await channel(bot.client);
    const message = expectOk(await bot.client.post(`/api/v1/channels/${channelId}/messages`, { content: 'Deploy?', content_json: buttons('approve', 'reject') }), 201).data;
    const second = expectOk(await bot.client.post(`/api/v1/channels/${channelId}/messages`, { content: 'Again?', content_json: buttons('approve') }), 201).data;
    const botStream = await openRaw(url, bot.key);
    open.push(botStream);
    const click = (who: Client, messageId: string, i: number) => who.post('/api/v1/interactions/actions', { message_id: messageId, action_id: i % 2 ? 'approve' : 'reject' });
    const answers = [];
    for (let batch = 0; batch < 6; batch++) answers.push(...(await Promise.all(Array.from({ length: 50 }, (_, i) => click(reader.client, message.id, i)))));
    const kept = answers.filter((r) => r.status === 202);
    expect(kept).to.have.length(10);
    for (const res of answers.filter((r) => r.status !== 202)) {
      expectError(res, 429, 'rate_limited');
      expect(Number(res.headers.get('retry-after'))).to.be.within(1, 10);
    }
    // Only the kept clicks reached the bot (each event is written with its click).
    const db = (await level3Stack()).rt.db;
    expect(Number((await db('interactions').where({ message_id: message.id }).count('* as n').first())!.n)).to.equal(10);
    await botStream.waitForCount((f) => f.event === 'interaction.action', 10);
    // Counted per person and per message: another person, and another message, start afresh.
    expectOk(await click(other.client, message.id, 0), 202);
    expectOk(await click(reader.client, second.id, 1), 202);
    expectError(await click(reader.client, message.id, 1), 429, 'rate_limited');
    expect(Number((await db('interactions').where({ user_id: reader.id }).count('* as n').first())!.n)).to.equal(11);
  });

  it('answers a hidden message and an unknown one the same way, after the same queries', async () => {
    const outsider = await ws.user();
    const privateId = await channel(ws.owner, true);
    const hidden = expectOk(await ws.owner.post(`/api/v1/channels/${privateId}/messages`, { content: 'x', content_json: buttons('go') }), 201).data;
    const dm = expectOk(await ws.owner.post('/api/v1/dms', { user_ids: [(await ws.user()).id] }), 201).data;
    const hiddenInDm = expectOk(await ws.owner.post(`/api/v1/dms/${dm.id}/messages`, { content: 'x', content_json: buttons('go') }), 201).data;
    // The key is known to the access cache first, as for any later request.
    await outsider.client.post('/api/v1/interactions/actions', { message_id: '00000000-0000-4000-8000-000000000001', action_id: 'go' });
    const attempt = async (messageId: string) => {
      let res: Awaited<ReturnType<Client['post']>> | undefined;
      const queries = await driverQueries(async () => {
        res = await outsider.client.post('/api/v1/interactions/actions', { message_id: messageId, action_id: 'go' });
      });
      expectError(res!, 404, 'not_found');
      return { queries, body: res!.text, headers: [...res!.headers.keys()].filter((h) => !['date', 'x-request-id', 'x-ratelimit-remaining', 'x-ratelimit-reset'].includes(h)) };
    };
    const unknown = await attempt('00000000-0000-4000-8000-000000000002');
    expect(unknown.queries.length, 'the unknown message runs the access check too').to.be.at.least(2);
    for (const id of [hidden.id, hiddenInDm.id]) expect(await attempt(id)).to.deep.equal(unknown);
  });
});

