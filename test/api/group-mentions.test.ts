// Group mentions and mentions written in content (contract §14, level 3;
// docs/team-chat.md): `@here` reaches the members with an open stream,
// `@channel` every member, `@<group>` the group's members who can read the
// conversation; plain `@name` from the API and from both hook formats is a
// mention, a compatible hook's `<!here>` is and `<@U…>` is not, and nothing
// written as code mentions. They count in mention_count, ride on the message
// (posted, listed, streamed) and follow an edit. At level 2 none of it.
import { expect } from 'chai';
import { Client } from '../support/client.js';
import { expectOk } from '../support/expect.js';
import { waitFor } from '../support/files.js';
import { openRaw } from '../support/sse.js';
import { level3Stack, newWorkspace, stack, uniqueName, type TestWorkspace } from '../support/stack.js';
import type { Stack } from '../../services/stack.js';

interface Member {
  id: string;
  key: string;
  client: Client;
  name: string;
}

async function person(ws: TestWorkspace, o: { is_agent?: boolean } = {}): Promise<Member> {
  const name = uniqueName(o.is_agent ? 'bot' : 'pat');
  return { ...(await ws.user({ name, ...o })), name };
}

async function channelOf(ws: TestWorkspace, members: Member[], o: { is_private?: boolean } = {}) {
  const ch = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('gm').slice(0, 60), is_private: o.is_private ?? false }), 201).data;
  for (const m of members) expectOk(await ws.owner.post(`/api/v1/channels/${ch.id}/members`, { user_id: m.id }), 201);
  return ch as { id: string };
}

const post = async (client: Client, channelId: string, content: string) => expectOk(await client.post(`/api/v1/channels/${channelId}/messages`, { content }), 201).data;
const mentionCount = async (client: Client, channelId: string) => expectOk(await client.get(`/api/v1/channels/${channelId}`)).data.mention_count as number;

describe('group mentions (level 3)', function () {
  this.timeout(30_000);
  let s: Stack;
  before(async () => {
    s = await level3Stack();
  });

  it('@here reaches only the members with an open stream; @channel every member; both count in mention_count', async () => {
    const ws = await newWorkspace(s);
    const online = await person(ws);
    const offline = await person(ws);
    const ch = await channelOf(ws, [online, offline]);
    const stream = await openRaw(s.url, online.key);
    try {
      // The stream's first frame lists who is online, itself included once presence has it.
      const init = await stream.waitFor((f) => f.event === 'init');
      expect(init.data.presence).to.have.property(online.id, 'online');
      const here = await post(ws.owner, ch.id, 'standup in 5 @here');
      expect(here.mentioned_group_ids).to.deep.equal(['here']);
      expect(here.mentioned_user_ids).to.include(online.id).and.not.include(offline.id);
      // The streamed event and the history page carry the same.
      const created = await stream.waitFor((f) => f.event === 'message.created' && f.data.message.id === here.id);
      expect(created.data.message).to.deep.include({ mentioned_group_ids: ['here'], mentioned_user_ids: here.mentioned_user_ids });
    } finally {
      stream.close();
    }
    const all = await post(ws.owner, ch.id, '@channel release is out');
    expect(all.mentioned_group_ids).to.deep.equal(['channel']);
    expect(all.mentioned_user_ids).to.include.members([online.id, offline.id, ws.ownerId]);
    const page = expectOk(await ws.owner.get(`/api/v1/channels/${ch.id}/messages`)).data;
    expect(page.find((m: { id: string }) => m.id === all.id)).to.deep.equal(all);
    expect(await mentionCount(online.client, ch.id)).to.equal(2);
    expect(await mentionCount(offline.client, ch.id)).to.equal(1);
  });

  it('@<group> reaches the group\'s members who can read the conversation, people and agents, and not the others', async () => {
    const ws = await newWorkspace(s);
    const inside = await person(ws);
    const outside = await person(ws);
    const bot = await person(ws, { is_agent: true });
    const handle = uniqueName('oncall').slice(0, 40);
    const group = expectOk(await ws.owner.post('/api/v1/user-groups', { handle, name: 'On call', member_ids: [inside.id, outside.id, bot.id] }), 201).data;
    const secret = await channelOf(ws, [inside, bot], { is_private: true });
    const m = await post(ws.owner, secret.id, `paging @${handle}: the db is down`);
    expect(m.mentioned_group_ids).to.deep.equal([group.id]);
    expect(m.mentioned_user_ids).to.have.members([inside.id, bot.id]);
    expect(await mentionCount(inside.client, secret.id)).to.equal(1);
    // A public channel is readable by every member of the workspace: the whole group.
    const open = await channelOf(ws, [inside]);
    const m2 = await post(ws.owner, open.id, `@${handle.toUpperCase()} have a look`);
    expect(m2.mentioned_group_ids).to.deep.equal([group.id]);
    expect(m2.mentioned_user_ids).to.have.members([inside.id, outside.id, bot.id]);
    // Members follow the group's current list.
    expectOk(await ws.owner.put(`/api/v1/user-groups/${group.id}/members`, { user_ids: [outside.id] }));
    const m3 = await post(ws.owner, secret.id, `@${handle} again`);
    expect(m3.mentioned_group_ids).to.deep.equal([group.id]);
    expect(m3.mentioned_user_ids).to.deep.equal([]);
  });

  it('@name written in content mentions from the API and a native hook; code, email addresses and unknown names do not', async () => {
    const ws = await newWorkspace(s);
    const alice = await person(ws);
    const bob = await person(ws);
    const ch = await channelOf(ws, [alice, bob]);
    const plain = await post(ws.owner, ch.id, `thanks @${alice.name}, and (@${bob.name}).`);
    expect(plain.mentioned_user_ids).to.have.members([alice.id, bob.id]);
    expect(plain.mentioned_group_ids).to.deep.equal([]);
    const notMentions = [
      `\`@${alice.name}\``,
      `\`\`\`\n@${alice.name}\n\`\`\``,
      `    @${alice.name} indented code`,
      `mail me at me@${alice.name}`,
      '@nobody-by-this-name',
      '`@here` and `@channel` in code',
    ];
    for (const content of notMentions) {
      const m = await post(ws.owner, ch.id, content);
      expect(m.mentioned_user_ids, content).to.deep.equal([]);
      expect(m.mentioned_group_ids, content).to.deep.equal([]);
    }
    expect(await mentionCount(alice.client, ch.id)).to.equal(1);

    const hook = expectOk(await ws.owner.post('/api/v1/webhooks/incoming', { channel_id: ch.id, name: 'CI' }), 201).data;
    const hooked = expectOk(await new Client(s.url).post(`/hooks/${hook.id}`, { content: `deploy done, @${alice.name}` }), 201).data;
    expect(hooked.mentioned_user_ids).to.deep.equal([alice.id]);
    // A native hook writes no Slack syntax: `<!here>` there is not a mention.
    const native = expectOk(await new Client(s.url).post(`/hooks/${hook.id}`, { content: 'look <!here>' }), 201).data;
    expect(native.mentioned_group_ids).to.deep.equal([]);
    expect(await mentionCount(alice.client, ch.id)).to.equal(2);
  });

  it('a Slack-compatible hook\'s <!here> and <!channel> mention, <@U…> does not, @name does', async () => {
    const ws = await newWorkspace(s);
    const alice = await person(ws);
    const ch = await channelOf(ws, [alice]);
    const hook = expectOk(await ws.owner.post('/api/v1/webhooks/incoming', { channel_id: ch.id, name: 'Slack' }), 201).data;
    const hooks = new Client(s.url);
    const sent = async (text: string) => {
      expect((await hooks.post(`/hooks/compat/${hook.id}`, { text })).status).to.equal(200);
      return waitFor(async () => {
        const page = expectOk(await ws.owner.get(`/api/v1/channels/${ch.id}/messages`)).data as { content: string; mentioned_user_ids: string[]; mentioned_group_ids: string[] }[];
        return page.find((m) => m.content.includes(text.slice(-12)));
      }, text);
    };
    const channel = await sent('<!channel> build failed: all');
    expect(channel.content).to.equal('@channel build failed: all');
    expect(channel.mentioned_group_ids).to.deep.equal(['channel']);
    expect(channel.mentioned_user_ids).to.include(alice.id);
    const here = await sent('<!here|here> build failed: some');
    expect(here.mentioned_group_ids).to.deep.equal(['here']);
    const slackUser = await sent('<@U123ABC> build failed: one');
    expect(slackUser.mentioned_user_ids).to.deep.equal([]);
    expect(slackUser.mentioned_group_ids).to.deep.equal([]);
    const named = await sent(`@${alice.name} build failed: named`);
    expect(named.mentioned_user_ids).to.deep.equal([alice.id]);
    const code = await sent('`<!here>` build failed: code');
    expect(code.mentioned_group_ids).to.deep.equal([]);
    // With attachments the worker renders the message again: its mentions stay.
    expect((await hooks.post(`/hooks/compat/${hook.id}`, { text: '<!channel> rendered later', attachments: [{ text: 'the details' }] })).status).to.equal(200);
    const rendered = await waitFor(async () => {
      const page = expectOk(await ws.owner.get(`/api/v1/channels/${ch.id}/messages`)).data as { content: string; mentioned_user_ids: string[]; mentioned_group_ids: string[] }[];
      return page.find((m) => m.content.includes('rendered later') && m.content.includes('the details'));
    }, 'the rendered message');
    expect(rendered.mentioned_group_ids).to.deep.equal(['channel']);
    expect(rendered.mentioned_user_ids).to.include(alice.id);
  });

  it('an edit mentions what the edited content writes', async () => {
    const ws = await newWorkspace(s);
    const alice = await person(ws);
    const ch = await channelOf(ws, [alice]);
    const m = await post(ws.owner, ch.id, 'no one yet');
    const edited = expectOk(await ws.owner.patch(`/api/v1/channels/${ch.id}/messages/${m.id}`, { content: `now @${alice.name} and @channel` })).data;
    expect(edited.mentioned_user_ids).to.include(alice.id);
    expect(edited.mentioned_group_ids).to.deep.equal(['channel']);
    const cleared = expectOk(await ws.owner.patch(`/api/v1/channels/${ch.id}/messages/${m.id}`, { content: 'never mind' })).data;
    expect(cleared).to.deep.include({ mentioned_user_ids: [], mentioned_group_ids: [] });
  });

  it('a streamed reply mentions what its whole content writes once finished, a name split across appends included', async () => {
    const ws = await newWorkspace(s);
    const alice = await person(ws);
    const bot = await person(ws, { is_agent: true });
    const ch = await channelOf(ws, [alice, bot]);
    const base = `/api/v1/channels/${ch.id}/messages`;
    const reply = expectOk(await bot.client.post(base, { content: 'Asking', streaming: true }), 201).data;
    const half = Math.ceil(alice.name.length / 2);
    for (const delta of [` @${alice.name.slice(0, half)}`, `${alice.name.slice(half)} and @chan`, 'nel.']) {
      expectOk(await bot.client.post(`${base}/${reply.id}/append`, { content: delta }));
    }
    const finished = expectOk(await bot.client.post(`${base}/${reply.id}/finish`, {})).data;
    expect(finished.content).to.equal(`Asking @${alice.name} and @channel.`);
    expect(finished.mentioned_user_ids).to.include(alice.id);
    expect(finished.mentioned_group_ids).to.deep.equal(['channel']);
    expect(await mentionCount(alice.client, ch.id)).to.equal(1);
  });

  it('at level 2 content writes no mentions and the message has no mentioned_group_ids', async () => {
    const ws = await newWorkspace(stack());
    const name = uniqueName('lv2');
    const alice = await ws.user({ name });
    const ch = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('l2') }), 201).data;
    expectOk(await ws.owner.post(`/api/v1/channels/${ch.id}/members`, { user_id: alice.id }), 201);
    const m = await post(ws.owner, ch.id, `@${name} @channel @here`);
    expect(m.mentioned_user_ids).to.deep.equal([]);
    expect(m).to.not.have.property('mentioned_group_ids');
  });
});
