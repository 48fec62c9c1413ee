// The relay's commit-safe cursor (shared/relay/outbox-table.ts) against
// Postgres and Redis: a transaction that commits long after later ones is
// still published; a relay that dies between reading and publishing, or
// between publishing and recording its position, loses nothing and publishes
// nothing twice; two API runtimes posting into one channel at once keep each
// poster's order. Posts go through the service (postMessage), as the routes
// and hooks post.
import { expect } from 'chai';
import { startStack, type Stack } from '../../services/stack.js';
import { postMessage } from '../../services/core/messages/messages.service.js';
import { messageCreatedEvents } from '../../services/core/messages/messages.store.js';
import { recordEvents } from '../../shared/events.js';
import type { BusKeys } from '../../shared/event-bus.js';
import { createLogger } from '../../shared/logger.js';
import { redisEventStream, type EventStream } from '../../shared/relay/event-stream.js';
import { AdvisoryLockLeadership } from '../../shared/relay/leadership.js';
import { OutboxRelay, type RelayParts } from '../../shared/relay/outbox-relay.js';
import { outboxTable, type OutboxRow } from '../../shared/relay/outbox-table.js';
import { waitFor } from '../support/files.js';
import { separateStack } from '../support/separate-stack.js';

describe('event cursor: every committed event once, in order', function () {
  this.timeout(60_000);
  let s: Stack;
  let stop: () => Promise<void>;
  let workspaceId: string;
  const relays: OutboxRelay[] = [];

  before(async () => {
    ({ stack: s, stop } = await separateStack({ ROLES: 'api' }));
    ({ workspace_id: workspaceId } = await s.rt.db('users').first('workspace_id'));
  });
  afterEach(async () => {
    await Promise.all(relays.splice(0).map((r) => r.stop()));
  });
  after(async () => {
    await stop?.();
  });

  const newChannel = async () => {
    const [row] = await s.rt.db('channels').insert({ workspace_id: workspaceId, name: `c-${Math.random().toString(36).slice(2)}` }).returning('id');
    return (row as { id: string }).id;
  };
  const post = (channelId: string, content: string, o: Partial<Parameters<typeof postMessage>[1]> = {}, rt = s.rt) =>
    postMessage(rt, { workspaceId, channelId, authorId: null, content, ...o });
  /** message.created contents of a channel on the stream, in stream order. */
  const created = async (channelId: string, key = s.rt.bus.shards[0]!.events) =>
    (await s.rt.redis.xrange(key, '-', '+'))
      .map(([, f]) => JSON.parse(f[f.indexOf('e') + 1]!) as { type: string; to: { channel_id?: string }; data: { message?: { content: string } } })
      .filter((e) => e.type === 'message.created' && e.to.channel_id === channelId)
      .map((e) => e.data.message!.content);

  /** A relay of its own on `streamKey`; `hooks` run around its XADDs (to kill it there). */
  function relay(streamKey: string, hooks: { before?: (rows: OutboxRow[]) => Promise<void>; after?: (rows: OutboxRow[]) => Promise<void> } = {}) {
    const leadership = new AdvisoryLockLeadership(s.rt.config.databaseUrl);
    const redis = redisEventStream(s.rt.redis, {
      bus: { shards: [{ index: 0, events: streamKey, live: `${streamKey}:live`, epoch: `${streamKey}:epoch` }] } as BusKeys,
      accessStreamKey: `${streamKey}:access`,
      retentionMs: null,
    });
    const stream: EventStream = {
      ready: () => redis.ready(),
      recentOutboxIds: (n) => redis.recentOutboxIds(n),
      async publish(rows) {
        await hooks.before?.(rows);
        await redis.publish(rows);
        await hooks.after?.(rows);
      },
    };
    const r = new OutboxRelay({
      leadership,
      outbox: outboxTable((sql, params, name) => leadership.query(sql, params, name), [messageCreatedEvents(s.rt.config.featureLevel)]),
      stream,
      wakeups: { listen() {}, announce() {}, close() {} },
      log: createLogger('silent'),
      metrics: { eventsPublished: { inc() {} } } as unknown as RelayParts['metrics'],
    });
    relays.push(r);
    return { relay: r, leadership };
  }

  it('publishes a transaction that commits long after later ones, when it commits, without holding them up', async () => {
    const channelId = await newChannel();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let held!: () => void;
    const isHeld = new Promise<void>((resolve) => (held = resolve));
    // Its message and an outbox row are written, then the transaction waits.
    const slow = post(channelId, 'slow', {
      alsoInTransaction: async (trx) => {
        await recordEvents(s.rt, trx, [{ type: 'channel.updated', to: { scope: 'workspace', workspace_id: workspaceId }, data: { channel: { id: channelId } } }]);
        held();
        await gate;
      },
    });
    await isHeld;
    for (const n of [1, 2, 3]) await post(channelId, `fast ${n}`);
    await waitFor(async () => (await created(channelId)).length === 3, 'the later posts to be published while the slow one is open');
    expect(await created(channelId)).to.deep.equal(['fast 1', 'fast 2', 'fast 3']);
    release();
    await slow;
    await s.relay!.drain();
    await waitFor(async () => (await created(channelId)).length === 4, 'the slow post to be published once committed');
    expect(await created(channelId)).to.deep.equal(['fast 1', 'fast 2', 'fast 3', 'slow']);
    const updated = (await s.rt.redis.xrange(s.rt.bus.shards[0]!.events, '-', '+'))
      .map(([, f]) => JSON.parse(f[f.indexOf('e') + 1]!) as { type: string; data: { channel?: { id: string } } })
      .filter((e) => e.type === 'channel.updated' && e.data.channel?.id === channelId);
    expect(updated).to.have.length(1);
  });

  it('deletes outbox rows in bulk once the recorded position is past them, and no message', async () => {
    const channelId = await newChannel();
    await post(channelId, 'stays');
    await recordEvents(s.rt, s.rt.db, [{ type: 'channel.updated', to: { scope: 'workspace', workspace_id: workspaceId }, data: { channel: { id: channelId } } }]);
    await s.relay!.drain();
    await waitFor(async () => Number((await s.rt.db('outbox').count<{ n: string }>('* as n').first())?.n) === 0, 'the outbox to be emptied');
    expect(await s.rt.db('messages').where({ channel_id: channelId }).pluck('content')).to.deep.equal(['stays']);
  });

  for (const when of ['between reading and publishing', 'between publishing and recording its position'] as const) {
    it(`loses and doubles nothing when the relay dies ${when}`, async () => {
      const streamKey = `${s.rt.bus.shards[0]!.events}:kill-${when.split(' ')[1]}`;
      await s.relay!.stop(); // these relays are the only ones (the stack's would publish to its own stream)
      const channelId = await newChannel();
      const die = async (leadership: AdvisoryLockLeadership) => {
        await leadership.close(); // the lock and the connection go: nothing more is read or recorded
        throw new Error('killed');
      };
      const first = relay(streamKey, when === 'between reading and publishing' ? { before: () => die(first.leadership) } : { after: () => die(first.leadership) });
      await first.relay.start();
      for (const n of [1, 2, 3]) await post(channelId, `m${n}`);
      await first.relay.drain();
      expect(first.leadership.held).to.equal(false);
      expect(await created(channelId, streamKey)).to.deep.equal(when === 'between reading and publishing' ? [] : ['m1', 'm2', 'm3']);
      await first.relay.stop();

      const second = relay(streamKey);
      await second.relay.start();
      for (const n of [4, 5]) await post(channelId, `m${n}`);
      await second.relay.drain();
      await waitFor(async () => (await created(channelId, streamKey)).length >= 5, 'the next relay to publish');
      expect(await created(channelId, streamKey)).to.deep.equal(['m1', 'm2', 'm3', 'm4', 'm5']);
    });
  }

  it("keeps each poster's order when two API runtimes post into one channel at once", async () => {
    const channelId = await newChannel();
    // A second runtime on the same database and stream: its own pool and relay (one of the two is elected).
    const other = await startStack(s.rt.config, createLogger('silent'));
    try {
      const chains = [s.rt, other.rt].flatMap((rt, i) =>
        [0, 1, 2].map(async (c) => {
          for (let n = 0; n < 20; n++) await post(channelId, `r${i}c${c} ${n}`, {}, rt);
        }),
      );
      // And a burst per runtime, 15 posts sent in one turn: one statement (shared/db/row-batch.ts), published in the order sent.
      const bursts = [s.rt, other.rt].map((rt, i) => Promise.all(Array.from({ length: 15 }, (_, n) => post(channelId, `r${i}burst ${n}`, {}, rt))));
      await Promise.all([...chains, ...bursts]);
      await Promise.all([other.relay?.drain(), s.relay?.drain()]);
      await waitFor(async () => (await created(channelId)).length >= 150, 'every post to be published');
      const seen = await created(channelId);
      expect(seen).to.have.length(150);
      expect(new Set(seen).size).to.equal(150);
      for (const chain of ['r0c0', 'r0c1', 'r0c2', 'r1c0', 'r1c1', 'r1c2']) {
        const mine = seen.filter((c) => c.startsWith(`${chain} `));
        expect(mine).to.deep.equal(Array.from({ length: 20 }, (_, n) => `${chain} ${n}`));
      }
      for (const burst of ['r0burst', 'r1burst']) {
        expect(seen.filter((c) => c.startsWith(`${burst} `))).to.deep.equal(Array.from({ length: 15 }, (_, n) => `${burst} ${n}`));
      }
    } finally {
      await other.close();
    }
  });
});
