// Not a request cannon (contract §11): without EVENT_SUBSCRIPTION_ALLOW_PRIVATE
// (the run's level-3 stack), http:// and every address that is not public
// unicast are refused at creation with 400 validation_error and skipped at
// delivery (logged, not retried), and no connection ever reaches them. The
// receivers listen on loopback and count connections, so a refusal that still
// connected would show.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { OutboundFailed, OutboundFetcher, OutboundRefused, addressRange, type FetchOptions, type Resolver } from '../../shared/http/outbound-fetch.js';
import { expectError, expectOk } from '../support/expect.js';
import { waitFor } from '../support/files.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { level3Stack, newWorkspace, uniqueName } from '../support/stack.js';

// The one outbound fetcher, as event subscriptions use it (a POST, 16 KiB of answer at most).
const fetcher = new OutboundFetcher({ dnsServers: [], perOwner: 4 });
const postJson = async (url: URL, body: string, o: { allowPrivate: boolean; timeoutMs: number; resolve?: Resolver }) => {
  const options: FetchOptions = { method: 'POST', body, owner: 'test', maxBytes: 16 * 1024, ...o };
  const answer = await fetcher.fetch(url, options);
  return { status: answer.status, body: answer.body.toString('utf8') };
};
const resolveChecked = (hostname: string, allowPrivate: boolean, resolve: Resolver) => fetcher.resolveChecked(hostname, allowPrivate, 2000, resolve);

describe('event subscriptions: private addresses are refused (level 3, no private switch)', function () {
  this.timeout(20_000);
  const receivers: Receiver[] = [];
  const receiver = async (host?: string) => {
    const r = await startReceiver({ host });
    receivers.push(r);
    return r;
  };
  after(async () => {
    await Promise.all(receivers.map((r) => r.close()));
  });

  it('refuses http://, loopback, RFC 1918, link-local metadata, [::1] and a name resolving to loopback at creation, connecting to none', async () => {
    const s = await level3Stack();
    expect(s.rt.config.eventDelivery.allowPrivate).to.equal(false);
    const ws = await newWorkspace(s);
    const v4 = await receiver();
    const v6 = await receiver('::1');
    const urls = [
      `http://example.com/events`,
      `http://127.0.0.1:${v4.port}/events`,
      `https://127.0.0.1:${v4.port}/events`,
      // The URL parser's other spellings of loopback.
      `https://0x7f.1:${v4.port}/events`,
      `https://2130706433:${v4.port}/events`,
      `https://localhost:${v4.port}/events`,
      `https://[::1]:${v6.port}/events`,
      `https://[::ffff:127.0.0.1]:${v4.port}/events`,
      'https://10.1.2.3/events',
      'https://192.168.0.10/events',
      'https://172.16.5.4/events',
      'https://169.254.169.254/latest/meta-data',
      'https://[fd00:ec2::254]/events',
      'https://100.100.100.200/events',
      'https://0.0.0.0/events',
      'https://224.0.0.1/events',
    ];
    for (const url of urls) {
      const res = await ws.owner.post('/api/v1/event-subscriptions', { url });
      expectError(res, 400, 'validation_error');
      expect(res.body.error.message, url).to.match(/^url: /);
    }
    expect(v4.connections).to.equal(0);
    expect(v6.connections).to.equal(0);
    expect(expectOk(await ws.owner.get('/api/v1/event-subscriptions')).data).to.deep.equal([]);
  });

  it('skips a subscription whose address is private at delivery: logged as an error, not retried, never connected', async () => {
    const s = await level3Stack();
    const ws = await newWorkspace(s);
    const r = await receiver();
    // As if made while the switch was on (or the name resolved elsewhere then): written directly.
    const [sub] = await s.rt
      .db('event_subscriptions')
      .insert({ workspace_id: ws.workspaceId, user_id: ws.ownerId, url: `https://localhost:${r.port}/events`, events: ['message.created'], secret: `axsec_${'a'.repeat(43)}` })
      .returning('*');
    const channel = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('c').slice(0, 60) }), 201).data;
    expectOk(await ws.owner.post(`/api/v1/channels/${channel.id}/messages`, { content: 'hello' }), 201);
    const [entry] = await waitFor(async () => {
      const log = expectOk(await ws.owner.get(`/api/v1/event-subscriptions/${sub.id}/deliveries`)).data;
      return log.length > 0 ? log : undefined;
    }, 'the refused attempt in the log');
    expect(entry).to.include({ event_type: 'message.created', attempt: 1, status_code: null });
    // The host and the kind of address, never the address it resolved to.
    expect(entry.error).to.match(/localhost.*loopback/);
    expect(entry.error).to.not.include('127.0.0.1');
    // Another event goes through the same path: still one attempt per event, no retry of the first.
    expectOk(await ws.owner.post(`/api/v1/channels/${channel.id}/messages`, { content: 'again' }), 201);
    const log = await waitFor(async () => {
      const l = expectOk(await ws.owner.get(`/api/v1/event-subscriptions/${sub.id}/deliveries`)).data;
      return l.length >= 2 ? l : undefined;
    }, 'the second refused attempt');
    expect(log.map((x: { attempt: number }) => x.attempt)).to.deep.equal([1, 1]);
    expect(r.connections).to.equal(0);
    expect(expectOk(await ws.owner.get(`/api/v1/event-subscriptions/${sub.id}`)).data.status).to.equal('active');
  });

  it('checks the address at every attempt and connects to the address it checked (DNS rebinding)', async () => {
    const r = await receiver();
    const url = new URL(`http://rebinding-${randomUUID().slice(0, 8)}.test:${r.port}/events`);
    // The name answers a public address at creation, loopback later: refused then, with no connection.
    let calls = 0;
    const rebinding = async () => (++calls === 1 ? [{ address: '93.184.216.34', family: 4 }] : [{ address: '127.0.0.1', family: 4 }]);
    expect(await resolveChecked(url.hostname, false, rebinding)).to.deep.equal({ address: '93.184.216.34', family: 4 });
    const refused = await postJson(url, '{}', { allowPrivate: false, timeoutMs: 1000, resolve: rebinding }).catch((e: unknown) => e);
    expect(refused).to.be.instanceOf(OutboundRefused);
    // One private address among public ones is enough to refuse.
    const mixed = async () => [{ address: '93.184.216.34', family: 4 }, { address: '10.0.0.1', family: 4 }];
    expect(await resolveChecked('mixed.test', false, mixed).catch((e: unknown) => e)).to.be.instanceOf(OutboundRefused);
    expect(r.connections).to.equal(0);
    // The connection goes to the checked address, never to a second resolution
    // (this name resolves nowhere else: only our lookup knows it).
    const answer = await postJson(url, '{}', { allowPrivate: true, timeoutMs: 2000, resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
    expect(answer.status).to.equal(200);
    expect(r.connections).to.equal(1);
    expect(r.deliveries[0]!.headers.host).to.equal(url.host);
    // An unknown name fails as a delivery failure (retried), not as a refusal.
    const unknown = await postJson(new URL(`https://${randomUUID()}.invalid/x`), '{}', { allowPrivate: false, timeoutMs: 2000 }).catch((e: unknown) => e);
    expect(unknown).to.be.instanceOf(OutboundFailed);
  });

  it('does not follow redirects at delivery either', async () => {
    const target = await receiver();
    const redirector = await startReceiver({ answer: () => ({ status: 302, headers: { location: target.url } }) });
    receivers.push(redirector);
    const answer = await postJson(new URL(redirector.url), '{}', { allowPrivate: true, timeoutMs: 2000 });
    expect(answer.status).to.equal(302);
    expect(target.connections).to.equal(0);
  });

  it('reads at most a small answer', async () => {
    const big = await startReceiver({ answer: () => ({ status: 200, body: 'x'.repeat(5_000_000) }) });
    receivers.push(big);
    const answer = await postJson(new URL(big.url), '{}', { allowPrivate: true, timeoutMs: 5000 });
    expect(answer.body.length).to.be.at.most(16 * 1024);
  });

  it('names the range of each address with ipaddr.js: only public unicast passes', () => {
    expect(addressRange('8.8.8.8')).to.equal('unicast');
    expect(addressRange('2606:4700::1')).to.equal('unicast');
    for (const a of ['127.0.0.1', '10.0.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '255.255.255.255', '224.0.0.251', '::1', '::', 'fe80::1', 'fc00::1', 'ff02::1', '::ffff:10.0.0.1', '64:ff9b::7f00:1', '2002:7f00:1::1']) {
      expect(addressRange(a), a).not.to.equal('unicast');
    }
  });
});
