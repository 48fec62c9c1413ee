// Event subscriptions without I/O: the one visibility rule, signatures, the
// retry schedule, URL rules and the permission rules (docs/bots.md). With
// receivers and the worker: test/api/event-subscriptions.test.ts.
import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import type { Actor } from '../../shared/auth.js';
import { loadConfig } from '../../shared/config.js';
import { streamReceives, type AxidEvent } from '../../shared/events.js';
import { deliveriesFor, deliveryBody, retryDelay } from '../../services/core/event-subscriptions/event-subscriptions.delivery.js';
import { urlProblem } from '../../shared/http/outbound-fetch.js';
import { canReach, seesAllSubscriptions } from '../../services/core/event-subscriptions/event-subscriptions.policy.js';
import { DEFAULT_EVENT_TYPES } from '../../services/core/event-subscriptions/event-subscriptions.schemas.js';
import { newSecret, signatureHeader, verifySignature } from '../../services/core/event-subscriptions/event-subscriptions.signature.js';

const user = { userId: 'u1', workspaceId: 'w1' };
const member = () => true;
const stranger = () => false;

describe('streamReceives: what a user stream (and so a subscription) gets', () => {
  const ev = (to: AxidEvent['to'], type: AxidEvent['type'] = 'message.created') => ({ type, to });

  it('workspace events to everyone of the workspace, never another workspace', () => {
    expect(streamReceives(ev({ scope: 'workspace', workspace_id: 'w1' }), user, stranger)).to.equal(true);
    expect(streamReceives(ev({ scope: 'workspace', workspace_id: 'w2' }), user, member)).to.equal(false);
  });

  it('channel events to its members and to the users it names', () => {
    const to = { scope: 'channel' as const, workspace_id: 'w1', channel_id: 'c1' };
    expect(streamReceives(ev(to), user, member)).to.equal(true);
    expect(streamReceives(ev(to), user, stranger)).to.equal(false);
    expect(streamReceives(ev({ ...to, user_ids: ['u1'] }), user, stranger)).to.equal(true);
    expect(streamReceives(ev({ ...to, workspace_id: 'w2', user_ids: ['u1'] }), user, member)).to.equal(false);
    // The membership asked is the addressed channel's.
    const asked: string[] = [];
    streamReceives(ev(to), user, (id) => (asked.push(id), true));
    expect(asked).to.deep.equal(['c1']);
  });

  it('user-addressed events to the named users only; internal events to no one', () => {
    expect(streamReceives(ev({ scope: 'users', workspace_id: 'w1', user_ids: ['u1'] }), user, member)).to.equal(true);
    expect(streamReceives(ev({ scope: 'users', workspace_id: 'w1', user_ids: ['u2'] }), user, member)).to.equal(false);
    expect(streamReceives(ev({ scope: 'users', workspace_id: 'w1', user_ids: ['u1'] }, 'api_key.revoked'), user, member)).to.equal(false);
    expect(streamReceives(ev({ scope: 'workspace', workspace_id: 'w1' }, 'webhook.deleted'), user, member)).to.equal(false);
  });
});

describe('Axid-Signature', () => {
  const body = '{"id":"evt_1","type":"message.created"}';
  const secret = newSecret();

  it('makes secrets of axsec_ and 43 base62 characters, all different', () => {
    const secrets = new Set(Array.from({ length: 50 }, newSecret));
    expect(secrets.size).to.equal(50);
    for (const s of secrets) expect(s).to.match(/^axsec_[0-9A-Za-z]{43}$/);
  });

  it("is Stripe's scheme: t, then one v1 per secret, each the hex HMAC-SHA256 of \"<t>.<body>\"", () => {
    const other = newSecret();
    const header = signatureHeader([secret, other], body, 1_795_561_200);
    const hmac = (k: string) => createHmac('sha256', k).update(`1795561200.${body}`).digest('hex');
    expect(header).to.equal(`t=1795561200,v1=${hmac(secret)},v1=${hmac(other)}`);
  });

  it('verifies with any live secret within 5 minutes, and nothing else', () => {
    const now = 1_795_561_200;
    const header = signatureHeader([secret], body, now);
    expect(verifySignature(header, body, secret, now)).to.equal(true);
    expect(verifySignature(header, body, secret, now + 300)).to.equal(true);
    expect(verifySignature(header, body, secret, now + 301)).to.equal(false);
    expect(verifySignature(header, body, secret, now - 301)).to.equal(false);
    expect(verifySignature(header, `${body} `, secret, now)).to.equal(false);
    expect(verifySignature(header, body, newSecret(), now)).to.equal(false);
    expect(verifySignature(header.replace(/t=\d+/, `t=${now + 1}`), body, secret, now)).to.equal(false);
    for (const broken of ['', 'v1=abc', `t=${now}`, `t=${now},v1=zz`, `t=x,v1=${'0'.repeat(64)}`]) expect(verifySignature(broken, body, secret, now), broken).to.equal(false);
  });
});

describe('delivery', () => {
  const cfg = loadConfig({}).eventDelivery;

  it('retries after 1 s, 2 s, 4 s, ... at most an hour apart, for 24 h, 10 s per attempt, by default', () => {
    expect([1, 2, 3, 4].map((n) => retryDelay(cfg, n))).to.deep.equal([1000, 2000, 4000, 8000]);
    expect(retryDelay(cfg, 40)).to.equal(3_600_000);
    expect(cfg).to.include({ timeoutMs: 10_000, retryWindowMs: 86_400_000, allowPrivate: false, perSubscription: 4 });
  });

  it('sends the event as the stream carries it, with its id and subscription', () => {
    const body = JSON.parse(
      deliveryBody({ subscriptionId: 's1', event: { id: 'evt_9', type: 'message.created', created_at: '2026-11-24T00:00:00.000Z', to: { scope: 'workspace', workspace_id: 'w1' }, data: { message: { id: 'm1' } } } }),
    );
    expect(body).to.deep.equal({ id: 'evt_9', type: 'message.created', created_at: '2026-11-24T00:00:00.000Z', subscription_id: 's1', data: { type: 'message.created', message: { id: 'm1' } } });
  });

  it('makes no job of an internal event (and asks the database nothing for one)', async () => {
    const rt = { db: () => { throw new Error('no query expected'); } } as never;
    const entry = (type: AxidEvent['type']) => ({ stream: 'b0', entryId: '1-0', outboxId: '1', event: { type, to: { scope: 'users' as const, workspace_id: 'w1', user_ids: [] }, data: {} } });
    expect(await deliveriesFor(rt, [entry('api_key.revoked'), entry('webhook.deleted')])).to.deep.equal([]);
  });

  it('subscribes to every type but typing and agent.status by default', () => {
    expect(DEFAULT_EVENT_TYPES).to.include('message.created').and.include('event_subscription.disabled').and.not.include('typing');
    expect(DEFAULT_EVENT_TYPES).to.include('command.invoked').and.include('interaction.approval').and.not.include('agent.status');
  });
});

describe('subscription URLs and permissions', () => {
  it('takes https:// only (http:// too with the private switch), never credentials in the URL', () => {
    expect(urlProblem('https://bot.example.com/x', false)).to.equal(null);
    expect(urlProblem('http://bot.example.com/x', false)).to.match(/https/);
    expect(urlProblem('http://127.0.0.1:8080/x', true)).to.equal(null);
    for (const bad of ['ftp://x.example/', 'javascript:alert(1)', 'file:///etc/passwd', 'https://a:b@x.example/', 'nonsense']) {
      expect(urlProblem(bad, true), bad).to.be.a('string');
    }
  });

  it('lets the creator reach a subscription, and admins and the owner with all=true only', () => {
    const actor = (role: Actor['role'], userId = 'u2'): Actor => ({ keyId: 'k', userId, workspaceId: 'w1', role, isAgent: false, scopes: null, conversationIds: null });
    const sub = { user_id: 'u1' };
    expect(canReach(actor('member', 'u1'), sub, false)).to.equal(true);
    expect(canReach(actor('member'), sub, true)).to.equal(false);
    expect(canReach(actor('admin'), sub, false)).to.equal(false);
    expect(canReach(actor('admin'), sub, true)).to.equal(true);
    expect(canReach(actor('owner'), sub, true)).to.equal(true);
    expect(seesAllSubscriptions(actor('member'))).to.equal(false);
    expect(seesAllSubscriptions(actor('admin'))).to.equal(true);
  });
});
