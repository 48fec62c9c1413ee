// Scheduled messages and reminders (level 3, contract §14): POST .../messages
// with send_at answers 202 and the worker posts it at its time as its author;
// PATCH and DELETE only while scheduled; a post the author may no longer make
// fails with its reason; a reminder arrives as a DM from "Axid". The stack
// runs with SCHEDULE_MIN_LEAD_SECONDS=1 (the test-only knob of shared/config.ts)
// so that tests need not wait a minute.
import { expect } from 'chai';
import { startStack, type Stack } from '../../services/stack.js';
import { createLogger } from '../../shared/logger.js';
import { serverLevels } from '../support/client.js';
import { expectError, expectOk } from '../support/expect.js';
import { waitFor } from '../support/files.js';
import { newWorkspace, stack, testEnv, uniqueName, type TestEnv, type TestWorkspace } from '../support/stack.js';

const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();

describe('scheduled messages and reminders (level 3)', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let s: Stack;
  let ws: TestWorkspace;

  before(async () => {
    env = testEnv({ FEATURE_LEVEL: '3', SCHEDULE_MIN_LEAD_SECONDS: '1' });
    s = await startStack(env.config, createLogger(env.config.logLevel));
    serverLevels.set(s.url, '3');
  });
  after(async () => {
    serverLevels.delete(s?.url);
    await s?.close();
    await env?.cleanup();
  });
  beforeEach(async () => {
    ws = await newWorkspace(s);
  });

  const newChannel = async () => expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('c') }), 201).data.id as string;
  const scheduledRow = (id: string) => s.rt.db('scheduled_messages').where({ id }).first();
  const settled = (id: string) => waitFor(async () => {
    const row = await scheduledRow(id);
    return row && row.status !== 'scheduled' ? row : undefined;
  }, 'the scheduled message to be settled', 20_000);

  it('answers 202 with the scheduled message, lists it, and posts it at its time as its author, once', async () => {
    const channelId = await newChannel();
    const sendAt = inSeconds(2);
    const doc = { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'later' }] }] };
    const created = expectOk(await ws.owner.post(`/api/v1/channels/${channelId}/messages`, { content: 'later', content_json: doc, metadata: { type: 'note', data: { a: 1 } }, send_at: sendAt }), 202).data;
    expect(created).to.deep.include({ conversation_id: channelId, thread_id: null, content: 'later', content_json: doc, metadata: { type: 'note', data: { a: 1 } }, status: 'scheduled', error: null, message_id: null });
    expect(new Date(created.send_at).getTime()).to.equal(new Date(sendAt).getTime());
    // Not posted yet.
    expect(expectOk(await ws.owner.get(`/api/v1/channels/${channelId}/messages`)).data).to.have.length(0);
    const listed = expectOk(await ws.owner.get('/api/v1/scheduled-messages')).data;
    expect(listed.map((m: { id: string }) => m.id)).to.deep.equal([created.id]);

    const row = await settled(created.id);
    expect(row.status).to.equal('sent');
    const messages = expectOk(await ws.owner.get(`/api/v1/channels/${channelId}/messages`)).data;
    expect(messages).to.have.length(1);
    expect(messages[0]).to.deep.include({ id: row.message_id, author_id: ws.ownerId, content: 'later', content_json: doc });
    const after = expectOk(await ws.owner.get('/api/v1/scheduled-messages')).data[0];
    expect(after).to.include({ status: 'sent', message_id: row.message_id, error: null });
    expect(new Date(messages[0].created_at).getTime()).to.be.at.least(new Date(sendAt).getTime());
  });

  it('schedules a thread reply and a DM', async () => {
    const channelId = await newChannel();
    const root = expectOk(await ws.owner.post(`/api/v1/channels/${channelId}/messages`, { content: 'root' }), 201).data;
    const reply = expectOk(await ws.owner.post(`/api/v1/channels/${channelId}/messages`, { content: 'a reply later', thread_id: root.id, send_at: inSeconds(1.5) }), 202).data;
    expect(reply.thread_id).to.equal(root.id);
    const other = await ws.user();
    const dm = expectOk(await ws.owner.post('/api/v1/dms', { user_ids: [other.id] }), 201).data;
    const inDm = expectOk(await ws.owner.post(`/api/v1/dms/${dm.id}/messages`, { content: 'dm later', send_at: inSeconds(1.5) }), 202).data;
    expect(inDm.conversation_id).to.equal(dm.id);
    expect((await settled(reply.id)).status).to.equal('sent');
    expect((await settled(inDm.id)).status).to.equal('sent');
    const replies = expectOk(await ws.owner.get(`/api/v1/channels/${channelId}/messages?thread_id=${root.id}`)).data;
    expect(replies.map((m: { content: string }) => m.content)).to.deep.equal(['a reply later']);
    const seen = expectOk(await other.client.get(`/api/v1/dms/${dm.id}/messages`)).data;
    expect(seen.map((m: { content: string; author_id: string }) => [m.content, m.author_id])).to.deep.equal([['dm later', ws.ownerId]]);
  });

  it('refuses a send_at too soon, too far or not a time, and content posting would refuse, with 400 and nothing kept', async () => {
    const channelId = await newChannel();
    const base = `/api/v1/channels/${channelId}/messages`;
    for (const sendAt of [inSeconds(0), inSeconds(-3600), inSeconds(121 * 86_400), 'tomorrow', '2026-13-01T00:00:00Z', 12345]) {
      expectError(await ws.owner.post(base, { content: 'x', send_at: sendAt }), 400, 'validation_error');
    }
    expectError(await ws.owner.post(base, { content: '   ', send_at: inSeconds(60) }), 400, 'validation_error');
    expectError(await ws.owner.post(base, { content: '<script></script>', send_at: inSeconds(60) }), 400, 'validation_error');
    expectError(await ws.owner.post(base, { content: 'x', content_json: { type: 'doc', content: [{ type: 'nope' }] }, send_at: inSeconds(60) }), 400, 'validation_error');
    expectError(await ws.owner.post(base, { content: 'x', thread_id: '00000000-0000-4000-8000-000000000000', send_at: inSeconds(60) }), 400, 'validation_error');
    expectError(await ws.owner.post(base, { content: 'x', streaming: true, send_at: inSeconds(60) }), 400, 'validation_error');
    // Not a member: as posting.
    const outsider = await ws.user();
    expectError(await outsider.client.post(base, { content: 'x', send_at: inSeconds(60) }), 403, 'forbidden');
    expect(Number((await s.rt.db('scheduled_messages').where({ channel_id: channelId }).count('* as n').first())?.n)).to.equal(0);
  });

  it('changes and deletes only while scheduled, and only the author’s own', async () => {
    const channelId = await newChannel();
    const base = `/api/v1/channels/${channelId}/messages`;
    const created = expectOk(await ws.owner.post(base, { content: 'first', send_at: inSeconds(300) }), 202).data;
    const later = inSeconds(1.5);
    const changed = expectOk(await ws.owner.patch(`/api/v1/scheduled-messages/${created.id}`, { content: 'second', send_at: later })).data;
    expect(changed).to.include({ content: 'second', status: 'scheduled' });
    expectError(await ws.owner.patch(`/api/v1/scheduled-messages/${created.id}`, { content: '' }), 400, 'validation_error');
    expectError(await ws.owner.patch(`/api/v1/scheduled-messages/${created.id}`, { send_at: inSeconds(0) }), 400, 'validation_error');
    // Someone else's is not there.
    const other = await ws.user({ role: 'admin' });
    expectError(await other.client.patch(`/api/v1/scheduled-messages/${created.id}`, { content: 'mine' }), 404, 'not_found');
    expectError(await other.client.delete(`/api/v1/scheduled-messages/${created.id}`), 404, 'not_found');
    expect(expectOk(await other.client.get('/api/v1/scheduled-messages')).data).to.deep.equal([]);

    // Posted once, with the changed content, at the changed time (the job of the old time does nothing).
    const row = await settled(created.id);
    expect(row.status).to.equal('sent');
    const messages = expectOk(await ws.owner.get(`${base}`)).data;
    expect(messages.map((m: { content: string }) => m.content)).to.deep.equal(['second']);
    expectError(await ws.owner.patch(`/api/v1/scheduled-messages/${created.id}`, { content: 'third' }), 409, 'conflict');
    expectError(await ws.owner.delete(`/api/v1/scheduled-messages/${created.id}`), 409, 'conflict');

    // Deleted while scheduled: never posted.
    const dropped = expectOk(await ws.owner.post(base, { content: 'never', send_at: inSeconds(1.5) }), 202).data;
    expect((await ws.owner.delete(`/api/v1/scheduled-messages/${dropped.id}`)).status).to.equal(204);
    expect(await scheduledRow(dropped.id)).to.equal(undefined);
    await new Promise((r) => setTimeout(r, 2500)); // past its time: nothing may appear
    expect(expectOk(await ws.owner.get(base)).data.map((m: { content: string }) => m.content)).to.deep.equal(['second']);
  });

  it('fails with its reason when the author left the channel or the workspace', async () => {
    const channelId = await newChannel();
    const member = await ws.user();
    expectOk(await member.client.post(`/api/v1/channels/${channelId}/members`, { user_id: member.id }), 201);
    const leaving = expectOk(await member.client.post(`/api/v1/channels/${channelId}/messages`, { content: 'after I left', send_at: inSeconds(1.5) }), 202).data;
    expect((await member.client.delete(`/api/v1/channels/${channelId}/members/${member.id}`)).status).to.equal(204);
    const failed = await settled(leaving.id);
    expect(failed).to.include({ status: 'failed', message_id: null });
    expect(failed.error).to.match(/no longer a member of this channel/);
    const shown = expectOk(await member.client.get('/api/v1/scheduled-messages')).data[0];
    expect(shown).to.include({ status: 'failed', error: failed.error });

    const removed = await ws.user();
    const dm = expectOk(await removed.client.post('/api/v1/dms', { user_ids: [ws.ownerId] }), 201).data;
    const gone = expectOk(await removed.client.post(`/api/v1/dms/${dm.id}/messages`, { content: 'after removal', send_at: inSeconds(1.5) }), 202).data;
    expect((await ws.owner.delete(`/api/v1/workspaces/current/members/${removed.id}`)).status).to.equal(204);
    expect((await settled(gone.id)).error).to.match(/no longer a member/);
    expect(expectOk(await ws.owner.get(`/api/v1/dms/${dm.id}/messages`)).data).to.have.length(0);
  });

  it('a reminder of a text arrives as a DM from "Axid", an agent no one signs in as', async () => {
    const created = expectOk(await ws.owner.post('/api/v1/reminders', { remind_at: inSeconds(1.5), text: 'water the plants\nand the cat' }), 201).data;
    expect(created).to.include({ text: 'water the plants\nand the cat', message_id: null, status: 'scheduled' });
    expect(expectOk(await ws.owner.get('/api/v1/reminders')).data.map((r: { id: string }) => r.id)).to.deep.equal([created.id]);
    const row = await waitFor(async () => {
      const r = await s.rt.db('reminders').where({ id: created.id }).first();
      return r?.status === 'sent' ? r : undefined;
    }, 'the reminder to be sent', 20_000);
    const message = await s.rt.db('messages').where({ id: row.sent_message_id }).first();
    const agent = await s.rt.db('users').where({ id: message.author_id }).first();
    expect(agent).to.include({ display_name: 'Axid', is_agent: true, workspace_id: ws.workspaceId, email: null });
    expect(Number((await s.rt.db('api_keys').where({ user_id: agent.id }).count('* as n').first())?.n)).to.equal(0);
    const dms = expectOk(await ws.owner.get('/api/v1/dms')).data;
    const dm = dms.find((c: { member_ids: string[] }) => c.member_ids.includes(agent.id));
    expect(dm.member_ids.slice().sort()).to.deep.equal([agent.id, ws.ownerId].sort());
    const [shown] = expectOk(await ws.owner.get(`/api/v1/dms/${dm.id}/messages`)).data;
    expect(shown.author_id).to.equal(agent.id);
    expect(shown.content).to.contain('water the plants').and.contain('and the cat');
    expect(shown.metadata).to.deep.equal({ type: 'axid.reminder', data: { reminder_id: created.id, message_id: null, conversation_id: null } });
    expectError(await ws.owner.delete(`/api/v1/reminders/${created.id}`), 409, 'conflict');

    // A second reminder reuses the same agent and DM.
    const second = expectOk(await ws.owner.post('/api/v1/reminders', { remind_at: inSeconds(1.5), text: 'again' }), 201).data;
    await waitFor(async () => (await s.rt.db('reminders').where({ id: second.id }).first())?.status === 'sent', 'the second reminder', 20_000);
    expect(Number((await s.rt.db('users').where({ workspace_id: ws.workspaceId, display_name: 'Axid' }).count('* as n').first())?.n)).to.equal(1);
    expect(expectOk(await ws.owner.get(`/api/v1/dms/${dm.id}/messages`)).data).to.have.length(2);
  });

  it('a reminder of a message links it; one of a message the caller cannot read is 404; one deleted is never sent', async () => {
    const channelId = await newChannel();
    const posted = expectOk(await ws.owner.post(`/api/v1/channels/${channelId}/messages`, { content: 'remember me' }), 201).data;
    const member = await ws.user();
    expectOk(await member.client.post(`/api/v1/channels/${channelId}/members`, { user_id: member.id }), 201);
    const reminder = expectOk(await member.client.post('/api/v1/reminders', { remind_at: inSeconds(1.5), message_id: posted.id }), 201).data;
    expect(reminder).to.include({ message_id: posted.id, conversation_id: channelId, text: null });
    const row = await waitFor(async () => {
      const r = await s.rt.db('reminders').where({ id: reminder.id }).first();
      return r?.status === 'sent' ? r : undefined;
    }, 'the reminder to be sent', 20_000);
    const message = await s.rt.db('messages').where({ id: row.sent_message_id }).first();
    expect(message.content).to.contain(`/c/${channelId}/m/${posted.id}`);

    const secret = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('p'), is_private: true }), 201).data.id;
    const hidden = expectOk(await ws.owner.post(`/api/v1/channels/${secret}/messages`, { content: 'secret' }), 201).data;
    expectError(await member.client.post('/api/v1/reminders', { remind_at: inSeconds(60), message_id: hidden.id }), 404, 'not_found');
    expectError(await member.client.post('/api/v1/reminders', { remind_at: inSeconds(60) }), 400, 'validation_error');
    expectError(await member.client.post('/api/v1/reminders', { remind_at: inSeconds(60), text: 'a', message_id: posted.id }), 400, 'validation_error');
    expectError(await member.client.post('/api/v1/reminders', { remind_at: inSeconds(0), text: 'a' }), 400, 'validation_error');

    const dropped = expectOk(await member.client.post('/api/v1/reminders', { remind_at: inSeconds(1.5), text: 'never' }), 201).data;
    expectError(await ws.owner.delete(`/api/v1/reminders/${dropped.id}`), 404, 'not_found');
    expect((await member.client.delete(`/api/v1/reminders/${dropped.id}`)).status).to.equal(204);
    await new Promise((r) => setTimeout(r, 2500)); // past its time: nothing may appear
    expect(Number((await s.rt.db('messages').where({ workspace_id: ws.workspaceId }).whereLike('content', '%never%').count('* as n').first())?.n)).to.equal(0);
  });

  it('the workspace made at bootstrap has its system agent from the start, with no key', async () => {
    const [first] = await s.rt.db('workspaces').orderBy('created_at').limit(1);
    expect(first.system_agent_id).to.be.a('string');
    const agent = await s.rt.db('users').where({ id: first.system_agent_id }).first();
    expect(agent).to.include({ name: 'axid', display_name: 'Axid', is_agent: true, workspace_id: first.id, email: null, password_hash: null });
    expect(Number((await s.rt.db('api_keys').where({ user_id: agent.id }).count('* as n').first())?.n)).to.equal(0);
    // Level 2 bootstraps without one.
    const [l2] = await stack().rt.db('workspaces').orderBy('created_at').limit(1);
    expect(l2.system_agent_id).to.equal(null);
  });

  it('level 2 knows neither send_at nor the routes', async () => {
    const l2 = await newWorkspace(stack());
    const channelId = expectOk(await l2.owner.post('/api/v1/channels', { name: uniqueName('c') }), 201).data.id;
    expectError(await l2.owner.post(`/api/v1/channels/${channelId}/messages`, { content: 'x', send_at: inSeconds(120) }), 400, 'validation_error');
    expectError(await l2.owner.get('/api/v1/scheduled-messages'), 404, 'not_found');
    expectError(await l2.owner.post('/api/v1/reminders', { remind_at: inSeconds(120), text: 'x' }), 404, 'not_found');
  });
});
