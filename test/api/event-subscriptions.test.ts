// Event subscriptions (level 3, contract §11; docs/bots.md): the resource, the
// worker's signed deliveries to real receivers on loopback, retries, the
// delivery log, visibility at delivery time, and disabling after the retry
// window. A stack of its own with the private switch on (receivers live on
// loopback) and short retry settings; the refusals without the switch are in
// event-subscription-addresses.test.ts.
import { expect } from 'chai';
import { Queue } from 'bullmq';
import { randomUUID } from 'node:crypto';
import type { Stack } from '../../services/stack.js';
import { DELIVERY_QUEUE } from '../../services/worker/event-deliveries.js';
import { verifySignature } from '../../services/core/event-subscriptions/event-subscriptions.signature.js';
import { DELIVERY_LOG_SIZE, logDelivery } from '../../services/core/event-subscriptions/event-subscriptions.store.js';
import { queuePrefix } from '../../shared/jobs.js';
import { serverLevels } from '../support/client.js';
import { expectError, expectOk } from '../support/expect.js';
import { waitFor } from '../support/files.js';
import { separateStack } from '../support/separate-stack.js';
import { openRaw } from '../support/sse.js';
import { FAST_DELIVERY, startReceiver, type Receiver } from '../support/receiver.js';
import { newWorkspace, uniqueName, type TestWorkspace } from '../support/stack.js';

describe('event subscriptions (level 3)', function () {
  this.timeout(30_000);
  let s: Stack;
  let stop: () => Promise<void>;
  const receivers: Receiver[] = [];
  const receiver = async (o?: Parameters<typeof startReceiver>[0]) => {
    const r = await startReceiver(o);
    receivers.push(r);
    return r;
  };

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

  const subscribe = async (client: TestWorkspace['owner'], url: string, events?: string[]) =>
    expectOk(await client.post('/api/v1/event-subscriptions', { url, ...(events ? { events } : {}) }), 201).data;

  async function channelWith(ws: TestWorkspace, memberIds: string[], o: { is_private?: boolean } = {}) {
    const channel = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('ch').slice(0, 60), is_private: o.is_private ?? false }), 201).data;
    for (const id of memberIds) expectOk(await ws.owner.post(`/api/v1/channels/${channel.id}/members`, { user_id: id }), 201);
    return channel;
  }

  const post = async (ws: TestWorkspace, channelId: string, content: string, extra: Record<string, unknown> = {}) =>
    expectOk(await ws.owner.post(`/api/v1/channels/${channelId}/messages`, { content, ...extra }), 201).data;

  /** Resolves once the delivery queue holds nothing waiting, running or delayed. */
  async function deliveriesSettled() {
    const queue = new Queue(DELIVERY_QUEUE, { connection: s.rt.redis, prefix: queuePrefix(s.rt.config) });
    try {
      await waitFor(async () => {
        const c = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children');
        return Object.values(c).every((n) => n === 0);
      }, 'an idle delivery queue');
    } finally {
      await queue.close();
    }
  }

  describe('the resource', () => {
    it('creates a subscription after the address echoes the challenge, with a secret shown once', async () => {
      const ws = await newWorkspace(s);
      const r = await receiver();
      const created = await subscribe(ws.owner, r.url);
      expect(created).to.include({ url: r.url, user_id: ws.ownerId, status: 'active' });
      expect(created.secret).to.match(/^axsec_[0-9A-Za-z]{43}$/);
      // Every type but typing by default.
      expect(created.events).to.include('message.created').and.not.include('typing');
      expect(r.deliveries).to.have.length(0); // the challenge is not a delivery

      const listed = expectOk(await ws.owner.get('/api/v1/event-subscriptions'));
      expect(listed.data.map((x: { id: string }) => x.id)).to.deep.equal([created.id]);
      expect(listed.data[0]).not.to.have.property('secret');
      const one = expectOk(await ws.owner.get(`/api/v1/event-subscriptions/${created.id}`)).data;
      expect(one).to.deep.equal(listed.data[0]);

      const chosen = await subscribe(ws.owner, r.url, ['message.created', 'typing']);
      expect(chosen.events).to.deep.equal(['message.created', 'typing']);
    });

    it('accepts the challenge as JSON {challenge}, and refuses an address that does not echo it with 400 saying what came back', async () => {
      const ws = await newWorkspace(s);
      const json = await receiver({ challenge: (c) => ({ status: 200, body: JSON.stringify({ challenge: c }), headers: { 'content-type': 'application/json' } }) });
      await subscribe(ws.owner, json.url);

      const wrong = await receiver({ challenge: () => ({ status: 200, body: 'hello' }) });
      const res = await ws.owner.post('/api/v1/event-subscriptions', { url: wrong.url });
      expectError(res, 400, 'validation_error');
      expect(res.body.error.message).to.include('"hello"');
      const failing = await receiver({ challenge: (c) => ({ status: 500, body: c }) });
      expectError(await ws.owner.post('/api/v1/event-subscriptions', { url: failing.url }), 400, 'validation_error');
      // Nothing listens here any more.
      const gone = await receiver();
      await gone.close();
      expectError(await ws.owner.post('/api/v1/event-subscriptions', { url: gone.url }), 400, 'validation_error');
      expect(expectOk(await ws.owner.get('/api/v1/event-subscriptions')).data).to.have.length(1);
    });

    it('does not follow a redirect at creation: the target is never reached', async () => {
      const ws = await newWorkspace(s);
      const target = await receiver();
      const redirector = await receiver({ challenge: () => ({ status: 307, body: '', headers: { location: target.url } }) });
      const res = await ws.owner.post('/api/v1/event-subscriptions', { url: redirector.url });
      expectError(res, 400, 'validation_error');
      expect(res.body.error.message).to.include('redirects are not followed');
      expect(target.connections).to.equal(0);
    });

    it('validates the body: url form, unknown event types, repeated types, extra fields', async () => {
      const ws = await newWorkspace(s);
      for (const body of [
        { url: 'not a url' },
        { url: 'ftp://example.com/x' },
        { url: 'https://user:pw@example.com/x' },
        { url: 'https://example.com/x', events: ['no.such'] },
        { url: 'https://example.com/x', events: [] },
        { url: 'https://example.com/x', events: ['typing', 'typing'] },
        { url: 'https://example.com/x', secret: 'mine' },
        {},
      ]) {
        expectError(await ws.owner.post('/api/v1/event-subscriptions', body), 400, 'validation_error');
      }
    });

    it('allows five per user: the sixth is 409 conflict and never reaches its address', async () => {
      const ws = await newWorkspace(s);
      const r = await receiver();
      for (let i = 0; i < 5; i++) await subscribe(ws.owner, r.url);
      const sixth = await receiver();
      expectError(await ws.owner.post('/api/v1/event-subscriptions', { url: sixth.url }), 409, 'conflict');
      expect(sixth.connections).to.equal(0);
      // Another user has five of their own.
      const other = await ws.user();
      await subscribe(other.client, r.url);
    });

    it("hides someone else's subscription (404); an admin lists and deletes every one with all=true", async () => {
      const ws = await newWorkspace(s);
      const r = await receiver();
      const member = await ws.user();
      const admin = await ws.user({ role: 'admin' });
      const mine = await subscribe(member.client, r.url);
      const owners = await subscribe(ws.owner, r.url);

      for (const path of [`/api/v1/event-subscriptions/${owners.id}`, `/api/v1/event-subscriptions/${owners.id}/deliveries`]) {
        expectError(await member.client.get(path), 404, 'not_found');
        expectError(await member.client.get(`${path}?all=true`), 404, 'not_found');
      }
      expectError(await member.client.post(`/api/v1/event-subscriptions/${owners.id}/rotate-secret`), 404, 'not_found');
      expectError(await member.client.delete(`/api/v1/event-subscriptions/${owners.id}`), 404, 'not_found');
      expectError(await member.client.get('/api/v1/event-subscriptions?all=true'), 403, 'forbidden');
      expectError(await member.client.get('/api/v1/event-subscriptions/not-an-id'), 404, 'not_found');

      const all = expectOk(await admin.client.get('/api/v1/event-subscriptions?all=true')).data.map((x: { id: string }) => x.id);
      expect(all).to.have.members([mine.id, owners.id]);
      expect(expectOk(await admin.client.get('/api/v1/event-subscriptions')).data).to.deep.equal([]);
      expectError(await admin.client.delete(`/api/v1/event-subscriptions/${mine.id}`), 404, 'not_found');
      expectOk(await admin.client.get(`/api/v1/event-subscriptions/${mine.id}?all=true`));
      expectOk(await admin.client.delete(`/api/v1/event-subscriptions/${mine.id}?all=true`), 204);
      expectError(await member.client.get(`/api/v1/event-subscriptions/${mine.id}`), 404, 'not_found');
      // Another workspace's admin sees none of them.
      const elsewhere = await newWorkspace(s);
      expectError(await elsewhere.owner.get(`/api/v1/event-subscriptions/${owners.id}?all=true`), 404, 'not_found');
    });

    it('keeps the last 100 attempts per subscription, newest first', async () => {
      const ws = await newWorkspace(s);
      const r = await receiver();
      const sub = await subscribe(ws.owner, r.url);
      for (let i = 1; i <= DELIVERY_LOG_SIZE + 5; i++) {
        await logDelivery(s.rt.db, { subscription_id: sub.id, event_id: `evt_${i}`, event_type: 'message.created', attempt: 1, status_code: 200, error: null, duration_ms: 3 });
      }
      const log = expectOk(await ws.owner.get(`/api/v1/event-subscriptions/${sub.id}/deliveries`)).data;
      expect(log).to.have.length(DELIVERY_LOG_SIZE);
      expect(log[0].event_id).to.equal(`evt_${DELIVERY_LOG_SIZE + 5}`);
      expect(log.at(-1).event_id).to.equal('evt_6');
      expect(Number((await s.rt.db('event_deliveries').where({ subscription_id: sub.id }).count({ n: '*' }))[0]!.n)).to.equal(DELIVERY_LOG_SIZE);
    });
  });

  describe('deliveries', () => {
    it('delivers a mention, signed: body, headers and signature as §11 says', async () => {
      const ws = await newWorkspace(s);
      const bot = await ws.user({ is_agent: true });
      const r = await receiver();
      const sub = await subscribe(bot.client, r.url);
      const channel = await channelWith(ws, [bot.id]);
      const doc = { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'hey ' }, { type: 'mention', attrs: { id: bot.id } }] }] };
      const message = await post(ws, channel.id, 'hey @bot', { content_json: doc });

      const [d] = await r.waitFor(1, (x) => x.body.type === 'message.created' && x.body.data.message.id === message.id);
      expect(d!.headers['content-type']).to.equal('application/json');
      expect(d!.headers['axid-event-id']).to.equal(d!.body.id);
      expect(d!.headers['axid-delivery-attempt']).to.equal('1');
      expect(Object.keys(d!.body)).to.deep.equal(['id', 'type', 'created_at', 'subscription_id', 'data']);
      expect(d!.body.subscription_id).to.equal(sub.id);
      expect(new Date(d!.body.created_at).toISOString()).to.equal(d!.body.created_at);
      expect(d!.body.data.message.mentioned_user_ids).to.deep.equal([bot.id]);
      expect(d!.body.data.type).to.equal('message.created');
      const header = String(d!.headers['axid-signature']);
      expect(header).to.match(/^t=\d+,v1=[0-9a-f]{64}$/);
      expect(verifySignature(header, d!.raw, sub.secret)).to.equal(true);
      // Any other body, secret or a stale t fails.
      expect(verifySignature(header, d!.raw.replace('hey', 'hoy'), sub.secret)).to.equal(false);
      expect(verifySignature(header, d!.raw, `${sub.secret.slice(0, -1)}${sub.secret.endsWith('x') ? 'y' : 'x'}`)).to.equal(false);
      expect(verifySignature(header, d!.raw, sub.secret, Math.floor(Date.now() / 1000) + 301)).to.equal(false);
      // The attempt is logged once its answer is in.
      const logged = await waitFor(async () => {
        const log = expectOk(await bot.client.get(`/api/v1/event-subscriptions/${sub.id}/deliveries`)).data;
        return log.find((x: { event_id: string }) => x.event_id === d!.body.id);
      }, 'the logged attempt');
      expect(logged).to.include({ event_type: 'message.created', attempt: 1, status_code: 200, error: null });
    });

    it('never delivers events of a private channel its owner is not in, nor after the owner leaves', async () => {
      const ws = await newWorkspace(s);
      const bot = await ws.user({ is_agent: true });
      const r = await receiver();
      await subscribe(bot.client, r.url, ['message.created']);
      const hidden = await channelWith(ws, [], { is_private: true });
      const shared = await channelWith(ws, [bot.id], { is_private: true });
      const outside = await channelWith(ws, []); // public, but the bot's stream gets only its channels

      await post(ws, hidden.id, 'secret 1');
      await post(ws, outside.id, 'not a member');
      const seen = await post(ws, shared.id, 'visible');
      await r.waitFor(1, (x) => x.body.data.message.id === seen.id);

      expectOk(await bot.client.delete(`/api/v1/channels/${shared.id}/members/${bot.id}`), 204);
      await post(ws, shared.id, 'after leaving');
      const fence = await channelWith(ws, [bot.id]);
      const last = await post(ws, fence.id, 'fence');
      await r.waitFor(1, (x) => x.body.data.message.id === last.id);
      await deliveriesSettled();
      expect(r.deliveries.map((x) => x.body.data.message.content)).to.have.members(['visible', 'fence']);
    });

    it('decides visibility at delivery time: a retry after the owner left is not delivered', async () => {
      const ws = await newWorkspace(s);
      const bot = await ws.user({ is_agent: true });
      let left = false;
      const r = await receiver({ answer: () => (left ? 200 : 503) });
      const sub = await subscribe(bot.client, r.url, ['message.created']);
      const channel = await channelWith(ws, [bot.id]);
      await post(ws, channel.id, 'first try fails');
      await r.waitFor(1);
      expectOk(await ws.owner.delete(`/api/v1/channels/${channel.id}/members/${bot.id}`), 204);
      left = true;
      await deliveriesSettled();
      const log = expectOk(await bot.client.get(`/api/v1/event-subscriptions/${sub.id}/deliveries`)).data;
      expect(log.map((x: { status_code: number }) => x.status_code)).to.deep.equal([503]);
      expect(r.deliveries).to.have.length(1);
    });

    it('retries a receiver answering 500 three times: one event, delivered on the fourth attempt, all four logged', async () => {
      const ws = await newWorkspace(s);
      const bot = await ws.user({ is_agent: true });
      const r = await receiver({ answer: (d) => (Number(d.headers['axid-delivery-attempt']) <= 3 ? 500 : 200) });
      const sub = await subscribe(bot.client, r.url, ['message.created']);
      const channel = await channelWith(ws, [bot.id]);
      await post(ws, channel.id, 'retry me');
      const four = await r.waitFor(4);
      expect(four.map((d) => d.headers['axid-delivery-attempt'])).to.deep.equal(['1', '2', '3', '4']);
      expect(new Set(four.map((d) => d.body.id)).size).to.equal(1);
      expect(new Set(four.map((d) => d.headers['axid-event-id'])).size).to.equal(1);
      // Each attempt is signed afresh.
      for (const d of four) expect(verifySignature(String(d.headers['axid-signature']), d.raw, sub.secret)).to.equal(true);
      await deliveriesSettled();
      expect(r.deliveries).to.have.length(4);
      const log = expectOk(await bot.client.get(`/api/v1/event-subscriptions/${sub.id}/deliveries`)).data;
      expect(log.map((x: { attempt: number; status_code: number }) => [x.attempt, x.status_code])).to.deep.equal([
        [4, 200],
        [3, 500],
        [2, 500],
        [1, 500],
      ]);
      expect(log[1].error).to.be.a('string').and.include('500');
      expect(expectOk(await bot.client.get(`/api/v1/event-subscriptions/${sub.id}`)).data.status).to.equal('active');
      // The worker's metrics: attempts by outcome, their time, the queue's depth.
      const metrics = await (await fetch(`${s.url}/metrics`)).text();
      const value = (name: string) => Number(metrics.split('\n').find((l) => l.startsWith(name))?.split(' ').at(-1) ?? NaN);
      expect(value('axid_event_deliveries_total{outcome="retry"}')).to.be.at.least(3);
      expect(value('axid_event_deliveries_total{outcome="delivered"}')).to.be.at.least(1);
      expect(value('axid_event_delivery_attempt_seconds_count')).to.be.at.least(4);
      expect(metrics).to.match(/^axid_event_delivery_queue_depth\{state="delayed"\} \d+$/m);
    });

    it('a receiver that never answers does not hold up another subscription, and holds at most EVENT_DELIVERY_PER_SUBSCRIPTION attempts', async () => {
      const ws = await newWorkspace(s);
      const slowBot = await ws.user({ is_agent: true });
      const fastBot = await ws.user({ is_agent: true });
      const slow = await receiver({ answer: () => 'hang' });
      const fast = await receiver();
      await subscribe(slowBot.client, slow.url, ['message.created']);
      await subscribe(fastBot.client, fast.url, ['message.created']);
      const channel = await channelWith(ws, [slowBot.id, fastBot.id]);
      const ids: string[] = [];
      for (let i = 0; i < 8; i++) ids.push((await post(ws, channel.id, `m${i}`)).id);
      await fast.waitFor(8);
      // Every delivery to the fast receiver arrived while the slow one still held attempts unanswered.
      expect(slow.open).to.be.greaterThan(0);
      expect(fast.deliveries.map((d) => d.body.data.message.id)).to.have.members(ids);
      expect(slow.maxOpen).to.be.at.most(Number(FAST_DELIVERY.EVENT_DELIVERY_PER_SUBSCRIPTION));
    });

    it('signs with the old and the new secret for a while after a rotation', async () => {
      const ws = await newWorkspace(s);
      const bot = await ws.user({ is_agent: true });
      const r = await receiver();
      const sub = await subscribe(bot.client, r.url, ['message.created']);
      const rotated = expectOk(await bot.client.post(`/api/v1/event-subscriptions/${sub.id}/rotate-secret`)).data;
      expect(rotated.id).to.equal(sub.id);
      expect(rotated.secret).to.match(/^axsec_[0-9A-Za-z]{43}$/).and.not.equal(sub.secret);
      const channel = await channelWith(ws, [bot.id]);
      await post(ws, channel.id, 'rotated');
      const [d] = await r.waitFor(1);
      const header = String(d!.headers['axid-signature']);
      expect(header.match(/v1=/g)).to.have.length(2);
      expect(verifySignature(header, d!.raw, rotated.secret)).to.equal(true);
      expect(verifySignature(header, d!.raw, sub.secret)).to.equal(true);
      // Past the 24 h, only the new one signs.
      await s.rt.db('event_subscriptions').where({ id: sub.id }).update({ previous_secret_until: new Date(Date.now() - 1000) });
      await post(ws, channel.id, 'later');
      const [later] = await r.waitFor(1, (x) => x.body.data.message.content === 'later');
      expect(String(later!.headers['axid-signature']).match(/v1=/g)).to.have.length(1);
      expect(verifySignature(String(later!.headers['axid-signature']), later!.raw, sub.secret)).to.equal(false);
    });

    it("disables a subscription failing for the whole retry window and tells its owner's stream", async () => {
      const ws = await newWorkspace(s);
      const bot = await ws.user({ is_agent: true });
      const r = await receiver({ answer: () => 500 });
      const sub = await subscribe(bot.client, r.url, ['message.created']);
      const stream = await openRaw(s.url, bot.key);
      try {
        const channel = await channelWith(ws, [bot.id]);
        await post(ws, channel.id, 'never accepted');
        const frame = await stream.waitFor((f) => f.event === 'event_subscription.disabled', 15_000);
        expect(frame.data.subscription).to.include({ id: sub.id, status: 'disabled', user_id: bot.id });
        expect(expectOk(await bot.client.get(`/api/v1/event-subscriptions/${sub.id}`)).data.status).to.equal('disabled');
        await deliveriesSettled();
        const attempts = r.deliveries.length;
        await post(ws, channel.id, 'after disabling');
        const fence = await receiver();
        await subscribe(bot.client, fence.url, ['message.created']);
        await post(ws, channel.id, 'fence');
        await fence.waitFor(1, (x) => x.body.data.message.content === 'fence');
        await deliveriesSettled();
        expect(r.deliveries).to.have.length(attempts);
      } finally {
        stream.close();
      }
    });

    it('answers 404 at level 2', async () => {
      const { stack: l2 } = { stack: (await import('../support/stack.js')).stack() };
      const ws = await newWorkspace(l2);
      expectError(await ws.owner.get('/api/v1/event-subscriptions'), 404, 'not_found');
      expectError(await ws.owner.post('/api/v1/event-subscriptions', { url: `https://example.com/${randomUUID()}` }), 404, 'not_found');
    });
  });
});
