// The loop guard (level 3, contract §15): at most AGENT_CHAIN_LIMIT (25)
// agent messages in a row in a thread, or outside threads, with no person's
// message between.
import { expect } from 'chai';
import { expectError, expectOk } from '../support/expect.js';
import { level3Stack, newWorkspace, uniqueName } from '../support/stack.js';

describe('Loop guard: AGENT_CHAIN_LIMIT (level 3)', () => {
  it('passes 25 agent posts in a row, refuses the 26th with 429 agent_chain_limit, and a person’s message starts the count again', async () => {
    const ws = await newWorkspace(await level3Stack());
    const bot = await ws.user({ is_agent: true });
    const other = await ws.user({ is_agent: true });
    const channelId = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('c') }), 201).data.id;
    for (const u of [bot, other]) expectOk(await ws.owner.post(`/api/v1/channels/${channelId}/members`, { user_id: u.id }), 201);
    const url = `/api/v1/channels/${channelId}/messages`;
    // Two agents talking to each other count together.
    for (let i = 0; i < 25; i++) expectOk(await (i % 2 ? other : bot).client.post(url, { content: `agent ${i}` }), 201);
    const refused = await bot.client.post(url, { content: 'one too many' });
    expectError(refused, 429, 'agent_chain_limit');
    expect(refused.body.error.message).to.match(/25 agent messages in a row/);
    expectError(await other.client.post(url, { content: 'still too many' }), 429, 'agent_chain_limit');
    const count = async () => Number((await (await level3Stack()).rt.db('messages').where({ channel_id: channelId }).count('* as n'))[0]!.n);
    expect(await count()).to.equal(25);

    // A thread has its own count: the top level's run does not hold its replies back.
    const root = expectOk(await ws.owner.post(url, { content: 'a person asks' }), 201).data;
    for (let i = 0; i < 25; i++) expectOk(await bot.client.post(url, { content: `reply ${i}`, thread_id: root.id }), 201);
    expectError(await bot.client.post(url, { content: 'reply 26', thread_id: root.id }), 429, 'agent_chain_limit');
    // The person's top-level message reset the top level's count.
    expectOk(await bot.client.post(url, { content: 'top level again' }), 201);
    // And a person's reply resets the thread's.
    expectOk(await ws.owner.post(url, { content: 'a person answers', thread_id: root.id }), 201);
    expectOk(await bot.client.post(url, { content: 'reply after a person', thread_id: root.id }), 201);
    expect(await count()).to.equal(25 + 1 + 25 + 1 + 2);
  });

  it('leaves people alone: a person posts any number of messages in a row', async () => {
    const ws = await newWorkspace(await level3Stack());
    const channelId = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('c') }), 201).data.id;
    for (let i = 0; i < 30; i++) expectOk(await ws.owner.post(`/api/v1/channels/${channelId}/messages`, { content: `person ${i}` }), 201);
  });
});

describe('PATCH /users/me suggested_prompts (level 3)', () => {
  it('an agent sets at most 4 prompts, shown on its user object; a person is refused', async () => {
    const s = await level3Stack();
    const ws = await newWorkspace(s);
    const bot = await ws.user({ is_agent: true });
    const prompts = [
      { title: 'Summarise', message: 'Summarise this channel for me' },
      { title: 'Deploy status', message: 'What is deployed right now?' },
    ];
    const me = expectOk(await bot.client.patch('/api/v1/users/me', { suggested_prompts: prompts })).data;
    expect(me.suggested_prompts).to.deep.equal(prompts);
    expect(expectOk(await ws.owner.get(`/api/v1/users/${bot.id}`)).data.suggested_prompts).to.deep.equal(prompts);
    const person = expectOk(await ws.owner.get('/api/v1/users/me')).data;
    expect(person).to.not.have.property('suggested_prompts');
    expectError(await ws.owner.patch('/api/v1/users/me', { suggested_prompts: prompts }), 403, 'forbidden');
    const five = Array.from({ length: 5 }, (_, i) => ({ title: `t${i}`, message: 'm' }));
    expectError(await bot.client.patch('/api/v1/users/me', { suggested_prompts: five }), 400, 'validation_error');
    expectError(await bot.client.patch('/api/v1/users/me', { suggested_prompts: [{ title: 'x'.repeat(41), message: 'm' }] }), 400, 'validation_error');
    expectError(await bot.client.patch('/api/v1/users/me', { suggested_prompts: [{ title: 't', message: 'x'.repeat(2001) }] }), 400, 'validation_error');
    expect(expectOk(await bot.client.get('/api/v1/users/me')).data.suggested_prompts).to.deep.equal(prompts);
    expect(expectOk(await bot.client.patch('/api/v1/users/me', { suggested_prompts: [] })).data.suggested_prompts).to.deep.equal([]);
  });
});
