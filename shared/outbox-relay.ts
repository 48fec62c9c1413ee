// Moves committed outbox rows to the Redis stream. One relay per database is
// active at a time (a session advisory lock elects it). Rows are deleted only
// after XADD succeeded, so a Redis outage delays events and loses none.
// Writers in the relay's process hand their committed rows over in memory, and
// the relay publishes them without reading the outbox (no database round trip
// between a commit and its event); it deletes published rows in batches.
// Writers elsewhere wake the relay with a Redis PUBLISH (not pg_notify:
// Postgres serializes the commits of notifying transactions) and the relay
// reads their rows; a 1 s poll catches any wake-up lost while Redis was away.
// Every consumer sees one order: the stream's.
import pg from 'pg';
import type { Knex } from 'knex';
import type { Logger } from './logger.js';
import type { Redis } from './redis.js';
import { ACCESS_EVENT_TYPES, ACCESS_STREAM_MAXLEN, STREAM_MAXLEN, type CommittedEvent } from './events.js';
import { createRedis } from './redis.js';
import type { Metrics } from './metrics.js';

const RELAY_LOCK_KEY = 0x41584945;
const BATCH = 500;
const POLL_MS = 1000;
/** Ids published lately, remembered so that a row is not published twice when both paths see it. */
const RECENT_IDS = 20_000;
/** Published rows are deleted in batches, at most this long after publishing (or at DELETE_BATCH rows). */
const DELETE_MS = 100;
const DELETE_BATCH = 1000;
/** How long stop() waits for a drain in flight (it waits on Redis while Redis is away). */
const STOP_WAIT_MS = 2000;

export interface RelayOptions {
  db: Knex;
  databaseUrl: string;
  redis: Redis;
  streamKey: string;
  /** Where access-changing events are published too (events.ts ACCESS_EVENT_TYPES). */
  accessStreamKey: string;
  log: Logger;
  metrics: Metrics;
  redisUrl: string;
  /** The Redis channel writers publish wake-ups on. */
  wakeChannel: string;
  /** false for the single-connection embedded database: no lock, queries through the pool. */
  listen: boolean;
}

export class OutboxRelay {
  private client: pg.Client | null = null;
  private leader = false;
  private stopped = false;
  private draining: Promise<void> | null = null;
  private again = false;
  private timer: NodeJS.Timeout | null = null;
  private readonly subscriber: Redis;
  private publishing = false;
  private publishAgain = false;
  private wakeScheduled = false;
  /** Rows handed over by this process's writers, not yet published. */
  private handedOver: CommittedEvent[] = [];
  /** Published, not yet deleted. */
  private published: number[] = [];
  private readonly recent = new Set<number>();
  /** Whether the next drain reads the outbox (rows of other processes, or left by a failure). */
  private needsRead = true;
  private deleteTimer: NodeJS.Timeout | null = null;

  constructor(private readonly o: RelayOptions) {
    this.subscriber = createRedis(o.redisUrl, 'axid-relay-wake');
    this.subscriber.on('error', (err) => o.log.debug({ err: err.message }, 'relay wake-up connection error'));
    this.subscriber.on('message', () => this.drainSoon(true));
  }

  start(): void {
    void this.subscriber.subscribe(this.o.wakeChannel).catch(() => undefined);
    void this.tick();
  }

  /** Called after a commit that wrote outbox rows: publishes them (the elected relay) or wakes the relay. */
  publishCommitted(committed: CommittedEvent[]): void {
    if (this.stopped) return;
    if (this.leader) {
      for (const c of committed) this.handedOver.push(c);
      this.drainSoon(false);
      return;
    }
    this.wake();
  }

  private wake(): void {
    // One PUBLISH in flight at a time; wake-ups meanwhile fold into one more.
    if (this.publishing) {
      this.publishAgain = true;
      return;
    }
    this.publishing = true;
    void this.o.redis
      .publish(this.o.wakeChannel, '1')
      .catch(() => undefined)
      .finally(() => {
        this.publishing = false;
        if (this.publishAgain) {
          this.publishAgain = false;
          this.wake();
        }
      });
  }

  /**
   * Wake-ups of one event-loop turn share one drain; a drain in flight takes
   * the ones after it in its next round. Batches grow with load, and nothing
   * waits on a timer. `read`: rows may be in the outbox that were not handed over.
   */
  private drainSoon(read: boolean): void {
    if (read) this.needsRead = true;
    if (!this.leader || this.wakeScheduled) return;
    this.wakeScheduled = true;
    setImmediate(() => {
      this.wakeScheduled = false;
      void this.run().catch((err) => this.o.log.warn({ err }, 'outbox relay: drain failed'));
    });
  }

  /** Publishes everything committed so far, reading the outbox too; resolves when it was seen empty. */
  kick(): Promise<void> {
    this.needsRead = true;
    return this.run();
  }

  private run(): Promise<void> {
    if (this.draining) {
      this.again = true;
      return this.draining;
    }
    this.draining = (async () => {
      try {
        do {
          this.again = false;
          await this.drain();
        } while (this.again && !this.stopped);
      } finally {
        this.draining = null;
      }
    })();
    return this.draining;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.deleteTimer) clearTimeout(this.deleteTimer);
    // Rows not yet deleted stay in the outbox for the next relay: nothing is lost
    // by not waiting for a Redis that does not answer (published rows left
    // behind are published again: delivery is at least once).
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      (async () => {
        await this.draining?.catch(() => undefined);
        await this.deletePublished().catch(() => undefined);
      })(),
      new Promise((resolve) => (timer = setTimeout(resolve, STOP_WAIT_MS))),
    ]);
    clearTimeout(timer);
    this.subscriber.disconnect();
    await this.client?.end().catch(() => undefined);
    this.client = null;
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    try {
      if (!this.leader) await this.campaign();
      if (this.leader) await this.kick();
    } catch (err) {
      this.o.log.warn({ err }, 'outbox relay: retrying');
      await this.resetClient();
    }
    if (!this.stopped) this.timer = setTimeout(() => void this.tick(), this.leader ? POLL_MS : POLL_MS * 2);
  }

  private async campaign(): Promise<void> {
    if (!this.o.listen) {
      this.leader = true;
      return;
    }
    if (!this.client) {
      const client = new pg.Client({ connectionString: this.o.databaseUrl, application_name: 'axid-relay' });
      client.on('error', () => void this.resetClient());
      await client.connect();
      this.client = client;
    }
    const { rows } = await this.client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [RELAY_LOCK_KEY]);
    if (rows[0]?.locked) {
      this.leader = true;
      this.o.log.debug('outbox relay: elected');
    }
  }

  private async resetClient(): Promise<void> {
    this.leader = false;
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  /** The relay's own connection when it has one, so relaying never waits for (or delays) request handling. */
  private query<R>(sql: string, params: unknown[]): Promise<R[]> {
    if (this.client) return this.client.query(sql, params).then((r) => r.rows as R[]);
    return this.o.db.raw(sql.replace(/\$\d+/g, '?'), params as never[]).then((r: { rows: R[] }) => r.rows);
  }

  /**
   * Publishes the rows handed over in memory and, when needed, every other
   * committed row, oldest first (a read also deletes what was published, in
   * the same statement). Otherwise published rows are deleted in batches.
   */
  private async drain(): Promise<void> {
    try {
      for (;;) {
        if (this.stopped || !this.leader) break;
        const fresh = this.handedOver;
        this.handedOver = [];
        await this.publish(fresh.map((c) => ({ id: c.outboxId, type: c.event.type, event: c.json })));
        if (this.needsRead) {
          this.needsRead = false;
          const published = this.published;
          this.published = [];
          const rows = await this.query<{ id: string; type: string; event: string }>(
            `WITH done AS (DELETE FROM outbox WHERE id = ANY($1::bigint[]))
             SELECT id, event->>'type' AS type, event::text AS event FROM outbox
              WHERE NOT (id = ANY($1::bigint[])) ORDER BY id LIMIT ${BATCH}`,
            [published],
          );
          await this.publish(rows.map((r) => ({ id: Number(r.id), type: r.type, event: r.event })));
          if (rows.length > 0) this.needsRead = true; // there may be more
        }
        if (this.handedOver.length === 0 && !this.needsRead) break;
      }
    } catch (err) {
      // The rows are still in the outbox: the next drain reads them back.
      this.handedOver = [];
      this.needsRead = true;
      throw err;
    } finally {
      this.deleteSoon();
    }
  }

  /** Deletes published rows: at once past DELETE_BATCH, else within DELETE_MS. */
  private deleteSoon(): void {
    if (this.published.length === 0 || this.deleteTimer) return;
    const run = () => {
      this.deleteTimer = null;
      void this.deletePublished().catch((err) => this.o.log.warn({ err }, 'outbox relay: delete failed'));
    };
    if (this.published.length >= DELETE_BATCH) run();
    else this.deleteTimer = setTimeout(run, DELETE_MS);
  }

  private async deletePublished(): Promise<void> {
    const ids = this.published;
    this.published = [];
    if (ids.length === 0) return;
    try {
      await this.query('DELETE FROM outbox WHERE id = ANY($1::bigint[])', [ids]);
    } catch (err) {
      this.published.push(...ids); // deleted with the next batch
      throw err;
    }
  }

  /** XADDs rows not published yet, in one pipeline; they are deleted by the next statement. */
  private async publish(rows: { id: number; type: string; event: string }[]): Promise<void> {
    const todo = rows.filter((r) => !this.recent.has(r.id));
    if (todo.length === 0) return;
    const pipeline = this.o.redis.pipeline();
    for (const row of todo) {
      pipeline.xadd(this.o.streamKey, 'MAXLEN', '~', STREAM_MAXLEN, '*', 'e', row.event);
      if (ACCESS_EVENT_TYPES.has(row.type)) pipeline.xadd(this.o.accessStreamKey, 'MAXLEN', '~', ACCESS_STREAM_MAXLEN, '*', 'e', row.event);
    }
    const results = await pipeline.exec();
    const failed = results?.find(([err]) => err);
    if (failed) throw failed[0];
    for (const row of todo) {
      this.published.push(row.id);
      this.recent.add(row.id);
    }
    // A Set iterates in insertion order: drop the oldest.
    for (const id of this.recent) {
      if (this.recent.size <= RECENT_IDS) break;
      this.recent.delete(id);
    }
    this.o.metrics.eventsPublished.inc(todo.length);
  }
}
