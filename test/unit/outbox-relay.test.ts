// The outbox relay's loop (shared/relay/outbox-relay.ts) without I/O: its parts
// are replaced by in-memory ones that behave like the outbox table, the Redis
// stream, the advisory lock and the wake-up channel. The same relay against
// Postgres and Redis: test/processes/outbox-relay.test.ts.
import { expect } from 'chai';
import { createLogger } from '../../shared/logger.js';
import { OutboxRelay, RELAY_BATCH, type RelayParts } from '../../shared/relay/outbox-relay.js';
import type { EventStream } from '../../shared/relay/event-stream.js';
import type { Leadership } from '../../shared/relay/leadership.js';
import type { OutboxRow, OutboxTable } from '../../shared/relay/outbox-table.js';
import type { Wakeups } from '../../shared/relay/wakeups.js';
import { SerialRun } from '../../shared/serial-run.js';

/**
 * Events in commit order and the relay's position in them, as outbox-table.ts
 * keeps it: published up to a point, read a little further, recorded in the
 * database up to a point at or before the published one.
 */
class MemoryOutbox implements OutboxTable {
  rows: OutboxRow[] = [];
  reads = 0;
  failNext = false;
  publishedUpTo = 0;
  readUpTo = 0;
  recordedUpTo = 0;
  private nextId = 1;

  commit(n: number, type = 'message.created'): number[] {
    const ids: number[] = [];
    for (let i = 0; i < n; i++) {
      const id = this.nextId++;
      this.rows.push({ id, type, event: JSON.stringify({ type, n: id }), channelId: null });
      ids.push(id);
    }
    return ids;
  }

  /** The ids past the recorded position: what a relay elected now would read again. */
  get unrecordedIds() {
    return this.rows.slice(this.recordedUpTo).map((r) => r.id);
  }

  get unrecorded() {
    return this.recordedUpTo < this.publishedUpTo || this.readUpTo > this.publishedUpTo;
  }

  async next(o: { published: boolean; record: boolean; limit: number }): Promise<OutboxRow[]> {
    this.reads++;
    if (this.failNext) {
      this.failNext = false;
      throw new Error('connection lost');
    }
    if (o.published) this.publishedUpTo = this.readUpTo;
    if (o.record) this.recordedUpTo = this.publishedUpTo;
    const rows = this.rows.slice(this.publishedUpTo, this.publishedUpTo + o.limit);
    this.readUpTo = this.publishedUpTo + rows.length;
    return rows;
  }

  async record(published: boolean): Promise<void> {
    if (published) this.publishedUpTo = this.readUpTo;
    this.recordedUpTo = this.publishedUpTo;
  }

  reset(): void {
    this.publishedUpTo = this.readUpTo = this.recordedUpTo;
  }
}

class MemoryStream implements EventStream {
  entries: number[] = [];
  isReady = true;
  /** The next publish fails: 'before' applying nothing, 'after' applying everything (a lost reply). */
  failNext: 'before' | 'after' | null = null;
  tailReads = 0;

  ready() {
    return this.isReady;
  }

  async publish(rows: OutboxRow[]): Promise<void> {
    const fail = this.failNext;
    this.failNext = null;
    if (fail === 'before') throw new Error('connection reset');
    for (const row of rows) this.entries.push(row.id);
    if (fail === 'after') throw new Error('connection reset before the reply');
  }

  async recentOutboxIds(count: number): Promise<number[]> {
    this.tailReads++;
    return this.entries.slice(-count);
  }
}

class FakeLeadership implements Leadership {
  held = false;
  canWin = true;
  closed = false;
  async campaign() {
    if (this.canWin && !this.closed) this.held = true;
    return this.held;
  }
  async query<R>(): Promise<R[]> {
    throw new Error('not used: the outbox is in memory');
  }
  async close() {
    this.held = false;
    this.closed = true;
  }
}

class FakeWakeups implements Wakeups {
  announced = 0;
  closed = false;
  onWake: (() => void) | null = null;
  listen(onWake: () => void) {
    this.onWake = onWake;
  }
  announce() {
    this.announced++;
  }
  close() {
    this.closed = true;
  }
}

function relayWith(over: { outbox?: MemoryOutbox; stream?: MemoryStream } = {}) {
  const published = { count: 0 };
  const parts = {
    leadership: new FakeLeadership(),
    outbox: new MemoryOutbox(),
    stream: new MemoryStream(),
    wakeups: new FakeWakeups(),
    ...over,
  };
  const metrics = { eventsPublished: { inc: (n = 1) => void (published.count += n) }, outboxCaughtUp: { set() {} }, relayLeader: { set() {} } } as unknown as RelayParts['metrics'];
  const relay = new OutboxRelay({ ...parts, log: createLogger('silent'), metrics });
  return { relay, published, ...parts };
}

async function waitUntil(ok: () => boolean, ms = 2_000) {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('OutboxRelay', () => {
  const running: OutboxRelay[] = [];
  const track = <T extends { relay: OutboxRelay }>(r: T) => (running.push(r.relay), r);
  afterEach(async () => {
    await Promise.all(running.splice(0).map((r) => r.stop()));
  });

  it('publishes committed events once each, in order, and records its position with a later read', async () => {
    const r = track(relayWith());
    const ids = r.outbox.commit(3);
    await r.relay.start();
    expect(r.stream.entries).to.deep.equal(ids);
    expect(r.published.count).to.equal(3);
    // Published, not yet recorded: a read moves the position on and publishes only what is new.
    const more = r.outbox.commit(2);
    await r.relay.drain();
    expect(r.stream.entries).to.deep.equal([...ids, ...more]);
    expect(r.outbox.publishedUpTo).to.equal(3);
    // Within RECORD_MS of the last record a read does not write it: the timer's read does.
    await waitUntil(() => r.outbox.recordedUpTo === 5 && !r.outbox.unrecorded);
  });

  it('publishes a backlog in batches, in order', async () => {
    const r = track(relayWith());
    const ids = r.outbox.commit(RELAY_BATCH * 2 + 7);
    await r.relay.start();
    expect(r.stream.entries).to.deep.equal(ids);
    expect(r.outbox.reads).to.equal(3); // two full batches, then the rest
  });

  it('publishes nothing and announces its commits while another process is elected', async () => {
    const r = track(relayWith());
    r.leadership.canWin = false;
    r.outbox.commit(2);
    await r.relay.start();
    r.relay.committed();
    await r.relay.drain();
    expect(r.stream.entries).to.deep.equal([]);
    expect(r.outbox.reads).to.equal(0);
    expect(r.wakeups.announced).to.equal(1);
  });

  it('drains when the elected relay commits or is woken by another process', async () => {
    const r = track(relayWith());
    await r.relay.start();
    const [first] = r.outbox.commit(1);
    r.relay.committed();
    const [second] = r.outbox.commit(1);
    r.wakeups.onWake!();
    await r.relay.drain();
    expect(r.stream.entries).to.deep.equal([first, second]);
    expect(r.wakeups.announced).to.equal(0);
  });

  it('reads nothing while Redis is away, and publishes everything once it is back', async () => {
    const r = track(relayWith());
    r.stream.isReady = false;
    const ids = r.outbox.commit(3);
    await r.relay.start();
    expect(r.outbox.reads).to.equal(0);
    r.stream.isReady = true;
    await r.relay.drain();
    expect(r.stream.entries).to.deep.equal(ids);
  });

  it('reads again events whose publish failed and publishes them once later', async () => {
    const r = track(relayWith());
    const ids = r.outbox.commit(3);
    r.stream.failNext = 'before';
    await r.relay.start();
    expect(r.stream.entries).to.deep.equal([]);
    expect(r.outbox.publishedUpTo).to.equal(0);
    await r.relay.drain();
    expect(r.stream.entries).to.deep.equal(ids);
  });

  it('does not publish again rows whose publish failed after the stream took them', async () => {
    const r = track(relayWith());
    const ids = r.outbox.commit(3);
    r.stream.failNext = 'after';
    await r.relay.start();
    await r.relay.drain();
    await r.relay.drain();
    expect(r.stream.entries).to.deep.equal(ids);
    expect(r.outbox.publishedUpTo).to.equal(3);
  });

  it('once elected, skips the events a relay before it published but did not record', async () => {
    const outbox = new MemoryOutbox();
    const stream = new MemoryStream();
    const ids = outbox.commit(4);
    stream.entries.push(ids[0]!, ids[1]!); // the relay before published these, then died
    const r = track(relayWith({ outbox, stream }));
    await r.relay.start();
    expect(stream.entries).to.deep.equal(ids);
    expect(stream.tailReads).to.equal(1);
  });

  it('keeps its position when a read fails, and moves it on with the next read', async () => {
    const r = track(relayWith());
    const ids = r.outbox.commit(2);
    await r.relay.start();
    r.outbox.failNext = true;
    await r.relay.drain();
    await r.relay.drain();
    expect(r.stream.entries).to.deep.equal(ids);
    expect(r.outbox.publishedUpTo).to.equal(2);
  });

  it('after an election reads from the recorded position and skips what the stream has', async () => {
    const r = track(relayWith());
    const ids = r.outbox.commit(3);
    await r.relay.start();
    expect(r.outbox.recordedUpTo).to.equal(0); // published, position not recorded yet
    // The lock is lost and won again (another relay's term in between published nothing).
    r.leadership.held = false;
    r.outbox.commit(2);
    await r.relay.drain();
    await waitUntil(() => r.stream.entries.length === 5, 3_000);
    expect(r.stream.entries).to.deep.equal([...ids, 4, 5]);
  });

  it('folds drains asked for while one runs into one more', async () => {
    const r = track(relayWith());
    await r.relay.start();
    const reads = r.outbox.reads;
    r.outbox.commit(1);
    await Promise.all([r.relay.drain(), r.relay.drain(), r.relay.drain(), r.relay.drain()]);
    expect(r.outbox.reads - reads).to.equal(2);
    expect(r.stream.entries).to.have.length(1);
  });

  it('on stop records its position, gives up the lock and stops listening', async () => {
    const r = relayWith();
    r.outbox.commit(2);
    await r.relay.start();
    expect(r.outbox.recordedUpTo).to.equal(0);
    await r.relay.stop();
    expect(r.outbox.recordedUpTo).to.equal(2);
    expect(r.leadership.closed).to.equal(true);
    expect(r.wakeups.closed).to.equal(true);
    r.outbox.commit(1);
    r.relay.committed();
    await r.relay.drain();
    expect(r.stream.entries).to.have.length(2);
  });
});

describe('SerialRun', () => {
  it('runs one at a time and folds asks made meanwhile into one more run', async () => {
    let runs = 0;
    let active = 0;
    let maxActive = 0;
    const serial = new SerialRun(async () => {
      runs++;
      active++;
      maxActive = Math.max(maxActive, active);
      await new Promise((resolve) => setImmediate(resolve));
      active--;
    });
    await Promise.all([serial.run(), serial.run(), serial.run()]);
    expect(runs).to.equal(2);
    expect(maxActive).to.equal(1);
    expect(serial.current).to.equal(null);
  });

  it('does not repeat once told to stop', async () => {
    let runs = 0;
    const serial = new SerialRun(
      async () => void runs++,
      () => false,
    );
    await Promise.all([serial.run(), serial.run()]);
    expect(runs).to.equal(1);
  });
});
