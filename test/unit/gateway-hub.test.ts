// The routing index without I/O: races between opening a stream and the
// events read meanwhile, which the HTTP tests cannot time deterministically.
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { expect } from 'chai';
import client from 'prom-client';
import { SseConnection } from '../../services/gateway/connection.js';
import { Hub, encodeFrame } from '../../services/gateway/hub.js';
import { gatewayMetrics } from '../../services/gateway/metrics.js';
import type { AxidEvent } from '../../shared/events.js';
import type { Metrics } from '../../shared/metrics.js';

/** A response whose headers went out unchunked: frames are written to its socket as they are. */
class FakeResponse extends EventEmitter {
  written: string[] = [];
  ended = false;
  chunkedEncoding = false;
  socket = {
    writableLength: 0,
    writableCorked: 0,
    cork: () => undefined,
    uncork: () => undefined,
    end: () => undefined,
    write: (b: Buffer) => {
      this.written.push(b.toString());
      return true;
    },
  };
  end(cb?: () => void) {
    this.ended = true;
    cb?.();
  }
  destroy() {
    this.ended = true;
  }
}

const metrics = gatewayMetrics({ registry: new client.Registry() } as unknown as Metrics);
const W = 'w1';
const U = 'u1';
const C = 'c1';
const info = { keyId: 'k1', userId: U, workspaceId: W, conversationIds: null };

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const message = (id: string): AxidEvent => ({
  type: 'message.created',
  to: { scope: 'channel', workspace_id: W, channel_id: C },
  data: { message: { id, channel_id: C } },
});
const member = (type: 'channel.member_added' | 'channel.member_removed'): AxidEvent => ({
  type,
  to: { scope: 'channel', workspace_id: W, channel_id: C, user_ids: [U] },
  data: { channel_id: C, user_id: U },
});

/** Makes a response's socket hold what is written while corked and let it out on the last uncork, as node's does. */
function corking(res: FakeResponse): FakeResponse {
  const { socket } = res;
  const held: string[] = [];
  socket.cork = () => void socket.writableCorked++;
  socket.uncork = () => {
    if (socket.writableCorked > 0 && --socket.writableCorked === 0) res.written.push(...held.splice(0));
  };
  socket.write = (b: Buffer) => {
    (socket.writableCorked > 0 ? held : res.written).push(b.toString());
    return true;
  };
  return res;
}

/** The loop's turns, until `done` holds (at most `turns` of them). */
async function turnsUntil(done: () => boolean, turns = 100) {
  for (let i = 0; i < turns && !done(); i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Opens a stream as the gateway does: reserved, then attached with the memberships `read` returns (events routed meanwhile are applied over them). */
async function open(hub: Hub, who = info, res = new FakeResponse(), read: Promise<string[]> = Promise.resolve([C])) {
  const conn = new SseConnection(who, res as unknown as ServerResponse, { maxQueueBytes: 1 << 20, metrics, ended: (c) => hub.detach(c) });
  const ticket = hub.reserve(who);
  const attached = read.then((ids) => hub.attach(conn, ticket, ids, () => conn.send(encodeFrame('init', {}), false))).finally(() => hub.release(ticket));
  return { res, conn, attached };
}

describe('gateway routing index', () => {
  it('applies a membership added while the user’s memberships were loading', async () => {
    const load = deferred<string[]>();
    const hub = new Hub();
    const { res, attached } = await open(hub, info, new FakeResponse(), load.promise);
    hub.route(member('channel.member_added'));
    load.resolve([]);
    await attached;
    hub.route(message('m1'));
    expect(res.written.map((f) => f.split('\n')[0])).to.deep.equal(['event: init', 'event: message.created']);
  });

  it('applies a removal read while loading over a snapshot that still had the membership', async () => {
    const load = deferred<string[]>();
    const hub = new Hub();
    const { res, attached } = await open(hub, info, new FakeResponse(), load.promise);
    hub.route(member('channel.member_removed'));
    load.resolve([C]);
    await attached;
    hub.route(message('m1'));
    expect(res.written.join('')).not.to.include('m1');
  });

  it('cancels a stream whose key is revoked while it opens: no init, ended', async () => {
    const load = deferred<string[]>();
    const hub = new Hub();
    const { res, conn, attached } = await open(hub, info, new FakeResponse(), load.promise);
    hub.route({ type: 'api_key.revoked', to: { scope: 'users', workspace_id: W, user_ids: [U] }, data: { key_id: 'k1' } });
    load.resolve([C]);
    await attached;
    expect(res.written).to.deep.equal([]);
    expect(res.ended).to.equal(true);
    expect(conn.closed).to.equal(true);
    expect(hub.size).to.equal(0);
  });

  // The key holder is read after the ticket, so a revocation or removal
  // committed after that read reaches the hub before the user is indexed: the
  // first stream of its workspace on this gateway has nothing indexed yet.
  for (const [what, event] of [
    ['its key is revoked', { type: 'api_key.revoked', to: { scope: 'users', workspace_id: W, user_ids: [U] }, data: { key_id: 'k1' } }],
    ['its user is removed', { type: 'member.removed', to: { scope: 'workspace', workspace_id: W }, data: { user_id: U } }],
  ] as const) {
    it(`cancels the first stream of a workspace when ${what} before it attaches`, async () => {
      const hub = new Hub();
      const conn = new SseConnection(info, new FakeResponse() as unknown as ServerResponse, { maxQueueBytes: 1 << 20, metrics, ended: (c) => hub.detach(c) });
      const ticket = hub.reserve(info);
      hub.route(event as AxidEvent);
      await hub.attach(conn, ticket, [C], () => conn.send(encodeFrame('init', {}), false));
      hub.release(ticket);
      expect(ticket.cancelled).to.equal(true);
      expect(conn.closed).to.equal(true);
      expect(hub.size).to.equal(0);
    });
  }

  it('forgets a user whose only stream ends before it attaches (its key holder not found)', async () => {
    const hub = new Hub();
    const ticket = hub.reserve(info);
    expect(hub.concernsLocalUser(member('channel.member_added'))).to.equal(true);
    hub.release(ticket);
    expect(hub.concernsLocalUser(member('channel.member_added'))).to.equal(false);
    expect(hub.route(message('m1'))).to.equal(0);
  });

  it('indexes the memberships of the first stream to attach; a later stream of the user adds nothing stale', async () => {
    const hub = new Hub();
    const first = await open(hub);
    await first.attached;
    // The second stream's read predates a removal the index has applied: the index stays as the events left it.
    hub.route(member('channel.member_removed'));
    const second = await open(hub, { ...info, keyId: 'k2' }, new FakeResponse(), Promise.resolve([C]));
    await second.attached;
    hub.route(message('m1'));
    for (const { res } of [first, second]) expect(res.written.join('')).not.to.include('"m1"');
  });

  it('delivers a channel’s event to every member left when a member’s stream is cut off midway', async () => {
    // The channel's members are routed from the index's own set: a stream cut
    // off during delivery leaves it (its user's last stream) while it is walked.
    const hub = new Hub();
    const streams = [];
    for (const userId of ['u1', 'u2', 'u3']) {
      const opened = await open(hub, { ...info, userId, keyId: `k-${userId}` });
      await opened.attached;
      streams.push(opened);
    }
    // The first member's client has fallen behind by more than the bound.
    streams[0]!.res.socket.writableLength = 2 << 20;
    expect(hub.route(message('m1'))).to.equal(2);
    expect(streams[0]!.conn.closed).to.equal(true);
    for (const { res } of streams.slice(1)) expect(res.written.at(-1)).to.include('"m1"');
    expect(hub.size).to.equal(2);
    // The index no longer holds the first member: the next event goes to the other two alone.
    expect(hub.route(message('m2'))).to.equal(2);
  });

  it('uncorks a batch’s streams in turns, each stream’s frames in the order routed', async () => {
    // Turns of 0 ms: one stream uncorked a turn, so the loop's other work may run between any two.
    const hub = new Hub(undefined, null, 0);
    const streams: Awaited<ReturnType<typeof open>>[] = [];
    for (const userId of ['u1', 'u2', 'u3']) {
      const opened = await open(hub, { ...info, userId, keyId: `k-${userId}` }, corking(new FakeResponse()));
      await opened.attached;
      streams.push(opened);
    }
    const received = () => streams.map(({ res }) => res.written.flatMap((f) => /"id":"(m\d)"/.exec(f)?.[1] ?? []));
    // A batch of two: the first event is written at once, the second corked on every socket.
    hub.route(message('m1'));
    hub.route(message('m2'));
    expect(received()).to.deep.equal([['m1'], ['m1'], ['m1']]);
    hub.endBatch();
    expect(received(), 'the first turn').to.deep.equal([['m1', 'm2'], ['m1'], ['m1']]);
    // The next batch is routed before the other two streams' turns: its frames queue behind what they hold.
    hub.route(message('m3'));
    hub.route(message('m4'));
    hub.endBatch();
    await turnsUntil(() => received().every((ids) => ids.length === 4));
    expect(received()).to.deep.equal(Array(3).fill(['m1', 'm2', 'm3', 'm4']));
    expect(streams.map(({ res }) => res.socket.writableCorked)).to.deep.equal([0, 0, 0]);
  });

  it('encodes the type first and equal to the event name', () => {
    const frame = encodeFrame('typing', { type: 'other', channel_id: C });
    const text = `event: typing\ndata: {"type":"typing","channel_id":"${C}"}\n\n`;
    expect(frame.bytes.toString()).to.equal(text);
    // The same bytes as one HTTP/1.1 chunk, written as is to chunked responses.
    expect(frame.chunk.toString()).to.equal(`${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`);
  });
});
