// Feedback buttons and approval requests (level 3, contract §15): readers
// answer, the message shows the answers, and its author is told.
import { expect } from 'chai';
import { expectError, expectOk } from '../support/expect.js';
import { openRaw, type RawStream } from '../support/sse.js';
import { level3Stack, newWorkspace, stack, uniqueName, type TestWorkspace } from '../support/stack.js';
import type { Client } from '../support/client.js';

const block = (name: string, props: Record<string, unknown>) => ({ type: `block_${name}`, attrs: { blockName: name, version: 1, props } });
const doc = (...content: unknown[]) => ({ type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Deploy?' }] }, ...content] });
const inAnHour = () => new Date(Date.now() + 3600_000).toISOString();

describe('Feedback and approvals (level 3)', () => {
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

  async function setup() {
    const bot = await ws.user({ is_agent: true });
    const alice = await ws.user();
    const bob = await ws.user();
    const channelId = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('c') }), 201).data.id as string;
    for (const u of [bot, alice, bob]) expectOk(await ws.owner.post(`/api/v1/channels/${channelId}/members`, { user_id: u.id }), 201);
    const post = async (client: Client, content_json: unknown) =>
      expectOk(await client.post(`/api/v1/channels/${channelId}/messages`, { content: 'Deploy?', content_json }), 201).data;
    return { bot, alice, bob, channelId, post };
  }

  describe('the blocks', () => {
    it('exist at level 3 only, with their props checked by the one validator', async () => {
      const { bot, post, channelId } = await setup();
      await post(bot.client, doc(block('feedback_buttons', {}), block('approval_request', { title: 'Deploy main?', expires_at: inAnHour() })));
      const bad: [unknown, string][] = [
        [block('feedback_buttons', { x: 1 }), 'content.1.attrs.props.x'],
        [block('approval_request', { expires_at: inAnHour() }), 'content.1.attrs.props.title'],
        [block('approval_request', { title: 't', expires_at: 'tomorrow' }), 'content.1.attrs.props.expires_at'],
        [block('approval_request', { title: 't', expires_at: new Date(Date.now() - 1000).toISOString() }), 'content.1.attrs.props.expires_at'],
        [block('approval_request', { title: 't', expires_at: inAnHour(), approver_ids: ['nope'] }), 'content.1.attrs.props.approver_ids.0'],
        [block('approval_request', { title: 't', expires_at: inAnHour(), decision: { decision: 'approve' } }), 'content.1.attrs.props.decision'],
      ];
      for (const [node, path] of bad) {
        const res = await bot.client.post(`/api/v1/channels/${channelId}/messages`, { content: 'x', content_json: doc(node) });
        expectError(res, 400, 'validation_error');
        expect(res.body.error.message).to.match(new RegExp(`^content_json\\.${path.replace(/\./g, '\\.')}:`));
      }
      const two = await bot.client.post(`/api/v1/channels/${channelId}/messages`, { content: 'x', content_json: doc(block('approval_request', { title: 'a', expires_at: inAnHour() }), block('approval_request', { title: 'b', expires_at: inAnHour() })) });
      expectError(two, 400, 'validation_error');
      // Level 2 knows neither.
      const ws2 = await newWorkspace(stack());
      const c2 = expectOk(await ws2.owner.post('/api/v1/channels', { name: uniqueName('c') }), 201).data.id;
      const res2 = await ws2.owner.post(`/api/v1/channels/${c2}/messages`, { content: 'x', content_json: doc(block('feedback_buttons', {})) });
      expectError(res2, 400, 'validation_error');
      expect(res2.body.error.message).to.equal('content_json.content.1.type: unknown block "block_feedback_buttons"');
    });
  });

  describe('POST /interactions/feedback', () => {
    it('keeps one value per person, changeable and cleared by null; the message carries its counts; interaction.feedback goes to the author only', async () => {
      const { bot, alice, bob, post } = await setup();
      const message = await post(bot.client, doc(block('feedback_buttons', {})));
      const botStream = await openRaw(url, bot.key);
      const aliceStream = await openRaw(url, alice.key);
      open.push(botStream, aliceStream);

      const first = expectOk(await alice.client.post('/api/v1/interactions/feedback', { message_id: message.id, value: 'positive' })).data;
      expect(first).to.deep.equal({ message_id: message.id, user_id: alice.id, value: 'positive', counts: { positive: 1, negative: 0 } });
      expectOk(await bob.client.post('/api/v1/interactions/feedback', { message_id: message.id, value: 'positive' }));
      expectOk(await alice.client.post('/api/v1/interactions/feedback', { message_id: message.id, value: 'negative' }));
      const told = await botStream.waitForCount((f) => f.event === 'interaction.feedback', 3);
      expect(told.map((f) => [f.data.user_id, f.data.value])).to.deep.equal([[alice.id, 'positive'], [bob.id, 'positive'], [alice.id, 'negative']]);
      expect(told[0]!.data).to.deep.equal({ type: 'interaction.feedback', message_id: message.id, user_id: alice.id, value: 'positive' });

      const shown = async () => expectOk(await bob.client.get(`/api/v1/channels/${message.channel_id}/messages/${message.id}`)).data.content_json.content[1].attrs.props;
      expect(await shown()).to.deep.equal({ counts: { positive: 1, negative: 1 } });
      const page = expectOk(await bob.client.get(`/api/v1/channels/${message.channel_id}/messages`)).data;
      expect(page[0].content_json.content[1].attrs.props).to.deep.equal({ counts: { positive: 1, negative: 1 } });
      const updated = await aliceStream.waitForCount((f) => f.event === 'message.updated' && f.data.message.id === message.id, 3);
      expect(updated[2]!.data.message.content_json.content[1].attrs.props.counts).to.deep.equal({ positive: 1, negative: 1 });

      expect(expectOk(await alice.client.post('/api/v1/interactions/feedback', { message_id: message.id, value: null })).data.counts).to.deep.equal({ positive: 1, negative: 0 });
      expect(await shown()).to.deep.equal({ counts: { positive: 1, negative: 0 } });
      await aliceStream.waitFor((f) => f.event === 'message.updated' && f.data.message.content_json.content[1].attrs.props.counts.positive === 1 && f.data.message.content_json.content[1].attrs.props.counts.negative === 0);
      expect(aliceStream.events('interaction.feedback')).to.have.length(0);
    });

    it('answers 404 for a message the caller cannot read and 400 for one without feedback buttons', async () => {
      const { bot, alice, post } = await setup();
      const plain = await post(bot.client, doc());
      const outsider = await ws.user();
      const priv = expectOk(await bot.client.post('/api/v1/channels', { name: uniqueName('p'), is_private: true }), 201).data.id;
      const hidden = expectOk(await bot.client.post(`/api/v1/channels/${priv}/messages`, { content: 'x', content_json: doc(block('feedback_buttons', {})) }), 201).data;
      expectError(await alice.client.post('/api/v1/interactions/feedback', { message_id: plain.id, value: 'positive' }), 400, 'validation_error');
      expectError(await outsider.client.post('/api/v1/interactions/feedback', { message_id: hidden.id, value: 'positive' }), 404, 'not_found');
      expectError(await alice.client.post('/api/v1/interactions/feedback', { message_id: 'x', value: 'positive' }), 404, 'not_found');
      expectError(await alice.client.post('/api/v1/interactions/feedback', { message_id: hidden.id, value: 'meh' }), 400, 'validation_error');
    });
  });

  describe('POST /interactions/approvals', () => {
    it('lets exactly one of two answers at once win; the message shows who decided what and when; the author is told', async () => {
      const { bot, alice, bob, post } = await setup();
      const message = await post(bot.client, doc(block('approval_request', { title: 'Deploy main to production?', expires_at: inAnHour() })));
      const botStream = await openRaw(url, bot.key);
      open.push(botStream);
      const answers = await Promise.all([
        alice.client.post('/api/v1/interactions/approvals', { message_id: message.id, decision: 'approve', comment: 'ship it' }),
        bob.client.post('/api/v1/interactions/approvals', { message_id: message.id, decision: 'deny' }),
      ]);
      const statuses = answers.map((r) => r.status).sort();
      expect(statuses).to.deep.equal([200, 409]);
      const winner = answers.find((r) => r.status === 200)!.body.data;
      expectError(answers.find((r) => r.status === 409)!, 409, 'conflict');
      const winnerId = winner.decision === 'approve' ? alice.id : bob.id;
      expect(winner).to.include({ message_id: message.id, user_id: winnerId });
      expect(Number((await (await level3Stack()).rt.db('approval_decisions').where({ message_id: message.id }).count('* as n'))[0]!.n)).to.equal(1);

      const props = expectOk(await alice.client.get(`/api/v1/channels/${message.channel_id}/messages/${message.id}`)).data.content_json.content[1].attrs.props;
      expect(props.decision).to.deep.equal({ decision: winner.decision, user_id: winnerId, comment: winner.comment, decided_at: winner.decided_at });
      const told = await botStream.waitFor((f) => f.event === 'interaction.approval');
      expect(told.data).to.deep.equal({ type: 'interaction.approval', message_id: message.id, decision: winner.decision, user_id: winnerId, comment: winner.comment });
      // Later answers, even the winner's again, are refused.
      expectError(await alice.client.post('/api/v1/interactions/approvals', { message_id: message.id, decision: 'approve' }), 409, 'conflict');
      // The audit log has the one decision that won, none for the refused ones (contract §16).
      const audited = await (await level3Stack()).rt.db('audit_log').where({ action: 'approval.answered', target_id: message.id });
      expect(audited.map((e: { actor_id: string; details: { decision: string } }) => [e.actor_id, e.details.decision])).to.deep.equal([[winnerId, winner.decision]]);
    });

    it('refuses a reader outside approver_ids with 403, and answers 410 gone once the request expired', async () => {
      const { bot, alice, bob, post } = await setup();
      const onlyBob = await post(bot.client, doc(block('approval_request', { title: 'Rotate keys?', expires_at: inAnHour(), approver_ids: [bob.id] })));
      expectError(await alice.client.post('/api/v1/interactions/approvals', { message_id: onlyBob.id, decision: 'approve' }), 403, 'forbidden');
      expect(expectOk(await bob.client.post('/api/v1/interactions/approvals', { message_id: onlyBob.id, decision: 'deny' })).data.decision).to.equal('deny');

      const expiring = await post(bot.client, doc(block('approval_request', { title: 'Deploy?', expires_at: inAnHour() })));
      // Time passes: the stored request's expires_at is now behind us.
      const db = (await level3Stack()).rt.db;
      const stored = (await db('messages').where({ id: expiring.id }).first('content_json')).content_json;
      stored.content[1].attrs.props.expires_at = new Date(Date.now() - 1000).toISOString();
      await db('messages').where({ id: expiring.id }).update({ content_json: JSON.stringify(stored) });
      expectError(await alice.client.post('/api/v1/interactions/approvals', { message_id: expiring.id, decision: 'approve' }), 410, 'gone');
      expect(await db('approval_decisions').where({ message_id: expiring.id }).first()).to.equal(undefined);
    });
  });
});
