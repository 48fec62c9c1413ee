// Moves committed events to the Redis event stream, oldest first, so that
// every consumer sees one order: the stream's. Three parts, each in its file:
// - leadership.ts: one relay per database is elected (an advisory lock);
// - outbox-table.ts: the events to publish, read by a commit-safe cursor
//   (outbox rows and posted messages), the position recorded in the database;
// - event-stream.ts: the XADDs, all or none per batch.
// The loop here has one path: wake up, read, publish, and record the position
// of what was published with a later read. The position moves only after an
// XADD succeeded, so a Redis outage delays events and loses none.
// Wake-ups come from commits in this process, from other processes
// (wakeups.ts), and from a 1 s poll.
//
// Delivery is at least once, and a relay avoids publishing an event twice:
// after it is elected, and after a publish that failed (its MULTI may have
// been applied all the same), it reads the stream's last entries and drops
// the events the stream already has (each entry carries its event id).
import type { Knex } from 'knex';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { BusKeys } from '../event-bus.js';
import { createRedis, type Redis } from '../redis.js';
import { SerialRun } from '../serial-run.js';
import { tracing, type TraceSpan, type Tracing } from '../tracing.js';
import { redisEventStream, type EventStream } from './event-stream.js';
import { AdvisoryLockLeadership, SoleLeadership, type Leadership } from './leadership.js';
import { outboxTable, type EventSource, type OutboxRow, type OutboxTable } from './outbox-table.js';
import { RedisWakeups, type Wakeups } from './wakeups.js';

export const RELAY_BATCH = 500;
/** Stream entries read to find rows already published: more than one batch, with room for typing events between. */
export const STREAM_CHECK = 4 * RELAY_BATCH;
const POLL_MS = 1000;
/** The position of what is published is recorded with a read at most this often, and by a read this long after the last batch. */
const RECORD_MS = 100;
/** How long stop() waits for a drain in flight (it waits on Redis while Redis is away). */
const STOP_WAIT_MS = 2000;

export interface RelayParts {
  leadership: Leadership;
  outbox: OutboxTable;
  stream: EventStream;
  wakeups: Wakeups;
  log: Logger;
  metrics: Pick<Metrics, 'eventsPublished' | 'outboxCaughtUp' | 'relayLeader'>;
}

export class OutboxRelay {
  private stopped = false;
  private pollTimer: NodeJS.Timeout | null = null;
  private recordTimer: NodeJS.Timeout | null = null;
  private recordedAt = 0;
  private drainScheduled = false;
  private readonly draining = new SerialRun(
    () => this.drainOnce().catch((err) => this.o.log.warn({ err }, 'outbox relay: retrying')),
    () => !this.stopped,
  );
  /** The last read was published: the next one moves the position on. */
  private published = false;
  /** Event ids the stream already has (read after an election or a failed publish): not published again. */
  private onStream = new Set<number>();
  /** Set after election and after a failed publish: the stream may already have rows the outbox still holds. */
  private checkStream = true;

  constructor(private readonly o: RelayParts) {}

  /** Starts campaigning and relaying; resolves after the first campaign and drain. */
  start(): Promise<void> {
    this.o.wakeups.listen(() => this.drainSoon());
    return this.tick();
  }

  /** A commit in this process wrote outbox rows: publish them, or wake the elected relay. */
  committed(): void {
    if (this.stopped) return;
    if (this.o.leadership.held) this.drainSoon();
    else this.o.wakeups.announce();
  }

  /** Resolves once everything committed before the call is published (when this relay is elected). */
  drain(): Promise<void> {
    return this.draining.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.pollTimer) clearTimeout(this.pollTimer);
    if (this.recordTimer) clearTimeout(this.recordTimer);
    // A position not recorded makes the next relay read those events again
    // and find them in the stream: nothing is lost by not waiting for a
    // Redis that does not answer.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      (async () => {
        await this.draining.current;
        if (this.o.leadership.held) await this.o.outbox.record(this.published).catch(() => undefined);
      })(),
      new Promise((resolve) => (timer = setTimeout(resolve, STOP_WAIT_MS))),
    ]);
    clearTimeout(timer);
    this.o.wakeups.close();
    this.o.stream.close?.();
    await this.o.leadership.close();
  }

  /** The wake-ups of one event-loop turn share one drain. */
  private drainSoon(): void {
    if (this.drainScheduled || !this.o.leadership.held) return;
    this.drainScheduled = true;
    setImmediate(() => {
      this.drainScheduled = false;
      // Woken by a request's commit, but not part of its trace: each event's publish is (publishSpans).
      void (tracing ? tracing.detached(() => this.drain()) : this.drain());
    });
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    try {
      if (!this.o.leadership.held && (await this.o.leadership.campaign())) {
        this.o.log.debug('outbox relay: elected');
        this.checkStream = true;
        this.published = false;
        this.o.outbox.reset();
      }
      this.o.metrics.relayLeader.set(this.o.leadership.held ? 1 : 0);
      if (this.o.leadership.held) await this.drain();
    } catch (err) {
      this.o.log.warn({ err }, 'outbox relay: campaign failed, retrying');
    }
    if (!this.stopped) this.pollTimer = setTimeout(() => void this.tick(), this.o.leadership.held ? POLL_MS : POLL_MS * 2);
  }

  private async drainOnce(): Promise<void> {
    const { leadership, outbox, stream } = this.o;
    if (this.stopped || !leadership.held || !stream.ready()) return;
    if (this.checkStream) {
      this.onStream = new Set(await stream.recentOutboxIds(STREAM_CHECK));
      this.checkStream = false;
    }
    for (;;) {
      const record = Date.now() - this.recordedAt >= RECORD_MS;
      const rows = await outbox.next({ published: this.published, record, limit: RELAY_BATCH });
      this.published = false;
      if (record) this.recordedAt = Date.now();
      if (rows.length === 0) return this.caughtUp();
      const fresh = this.onStream.size > 0 ? rows.filter((row) => !this.onStream.has(row.id)) : rows;
      const spans = tracing && fresh.length > 0 ? publishSpans(tracing, fresh) : null;
      try {
        if (fresh.length > 0) await stream.publish(fresh);
      } catch (err) {
        this.checkStream = true;
        if (spans) for (const span of spans) span.end(err);
        throw err;
      }
      if (spans) for (const span of spans) span.end();
      this.published = true;
      this.o.metrics.eventsPublished.inc(fresh.length);
      if (rows.length < RELAY_BATCH) return this.caughtUp();
      if (this.stopped || !leadership.held) return this.recordSoon();
    }
  }

  /** Everything committed when the last read began is on the stream (the outbox lag metric). */
  private caughtUp(): void {
    this.o.metrics.outboxCaughtUp.set(Date.now() / 1000);
    this.recordSoon();
  }

  /** Once the stream has it all: records the position with a read a little later, if no read records it first. */
  private recordSoon(): void {
    if (this.recordTimer || this.stopped || !(this.published || this.o.outbox.unrecorded)) return;
    this.recordTimer = setTimeout(() => {
      this.recordTimer = null;
      void this.drain();
    }, RECORD_MS);
  }
}

/**
 * A span per traced event published, child of the change that wrote it; the
 * event goes on to the stream with the span's context (event-stream.ts `t`),
 * so the gateway's delivery and the worker's work are its children.
 */
function publishSpans(t: Tracing, rows: OutboxRow[]): TraceSpan[] {
  const spans: TraceSpan[] = [];
  for (const row of rows) {
    if (!row.trace) continue;
    const span = t.start(`relay publish ${row.type}`, 'producer', row.trace, { 'axid.event.type': row.type, 'axid.event.seq': row.id });
    row.trace = span.carrier;
    spans.push(span);
  }
  return spans;
}

export interface RelayOptions {
  db: Knex;
  databaseUrl: string;
  redis: Redis;
  redisUrl: string;
  /** The shards of the event bus (shared/event-bus.ts). */
  bus: BusKeys;
  /** Where access-changing events are published too (events.ts ACCESS_EVENT_TYPES). */
  accessStreamKey: string;
  /** How long entries are kept for replay (level 3); null: trimmed by length only. */
  retentionMs: number | null;
  /** The Redis channel writers announce commits on. */
  wakeChannel: string;
  /** true for the single-connection embedded database: always elected, queries through the pool. */
  sole: boolean;
  /** Tables whose rows are events themselves, read with the outbox (services/core: messages). */
  eventSources?: EventSource[];
  log: Logger;
  metrics: Metrics;
}

export function createOutboxRelay(o: RelayOptions): OutboxRelay {
  const leadership = o.sole ? new SoleLeadership(o.db) : new AdvisoryLockLeadership(o.databaseUrl);
  // A connection of its own: a WAIT for a replica (event-stream.ts) blocks only the relay.
  const publisher = createRedis(o.redisUrl, 'axid-relay');
  publisher.on('error', (err: Error) => o.log.debug({ err: err.message }, 'relay redis connection error'));
  return new OutboxRelay({
    leadership,
    outbox: outboxTable((sql, params, name) => leadership.query(sql, params, name), o.eventSources),
    stream: redisEventStream(publisher, { bus: o.bus, accessStreamKey: o.accessStreamKey, retentionMs: o.retentionMs }),
    wakeups: new RedisWakeups(o.redis, o.redisUrl, o.wakeChannel, o.log),
    log: o.log,
    metrics: o.metrics,
  });
}
