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
  private reading: Promise<void> | null = null;
  private readAgain = false;
  private timer: NodeJS.Timeout | null = null;
  private readonly subscriber: Redis;
  private waking = false;
  private wakeAgain = false;
  private flushScheduled = false;
  private readScheduled = false;
  /** Rows handed over by this process's writers, not yet published. */
  private handedOver: CommittedEvent[] = [];
  /** XADD pipelines under way. */
  private readonly inFlight = new Set<Promise<void>>();
  /** Published, not yet deleted. */
  private published: number[] = [];
  /** Ids being published or published lately: the other path skips them. */
  private readonly recent = new Set<number>();
  private deleteTimer: NodeJS.Timeout | null = null;

  constructor(private readonly o: RelayOptions) {
    this.subscriber = createRedis(o.redisUrl, 'axid-relay-wake');
    this.subscriber.on('error', (err) => o.log.debug({ err: err.message }, 'relay wake-up connection error'));
    this.subscriber.on('message', () => this.readSoon());
  }

  start(): void {
    void this.subscriber.subscribe(this.o.wakeChannel).catch(() => undefined);
    void this.tick();
  }

  /** Called after a commit that wrote outbox rows: publishes them (the elected relay) or wakes the relay. */
  publishCommitted(committed: CommittedEvent[]): void {
    if (this.stopped) return;
    if (!this.leader) return this.wake();
    for (const c of committed) this.handedOver.push(c);
    // The commits of one event-loop turn share one pipeline. Pipelines go out
    // in order on one connection: nothing waits for the one before.
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      const fresh = this.handedOver;
      this.handedOver = [];
      if (!this.leader || this.stopped) return; // the rows stay in the outbox for whoever relays now
      this.track(this.publish(fresh.map((c) => ({ id: c.outboxId, type: c.event.type, event: c.json })))).catch((err) => {
        // The rows are still in the outbox: a read publishes them.
        this.o.log.warn({ err }, 'outbox relay: publishing failed');
        this.readSoon();
      });
    });
  }

  /**
   * Publishes everything committed so far: reads the outbox too, and resolves
   * once the outbox was read to its end and every pipeline under way is done.
   */
  async kick(): Promise<void> {
    await this.read();
    await Promise.allSettled([...this.inFlight]);
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
        await Promise.allSettled([this.reading, ...this.inFlight]);
        await this.deletePublished().catch(() => undefined);
      })(),
      new Promise((resolve) => (timer = setTimeout(resolve, STOP_WAIT_MS))),
    ]);
    clearTimeout(timer);
    this.subscriber.disconnect();
    await this.client?.end().catch(() => undefined);
    this.client = null;
  }

  private wake(): void {
    // One PUBLISH in flight at a time; wake-ups meanwhile fold into one more.
    if (this.waking) {
      this.wakeAgain = true;
      return;
    }
    this.waking = true;
    void this.o.redis
      .publish(this.o.wakeChannel, '1')
      .catch(() => undefined)
      .finally(() => {
        this.waking = false;
        if (this.wakeAgain) {
          this.wakeAgain = false;
          this.wake();
        }
      });
  }

  private track(publishing: Promise<void>): Promise<void> {
    this.inFlight.add(publishing);
    void publishing.catch(() => undefined).finally(() => this.inFlight.delete(publishing));
    return publishing;
  }

  /** Wake-ups of one event-loop turn share one read. */
  private readSoon(): void {
    if (!this.leader || this.readScheduled) return;
    this.readScheduled = true;
    setImmediate(() => {
      this.readScheduled = false;
      void this.read().catch((err) => this.o.log.warn({ err }, 'outbox relay: reading the outbox failed'));
    });
  }

  /** One read at a time; a read asked for meanwhile runs once more after it. */
  private read(): Promise<void> {
    if (this.reading) {
      this.readAgain = true;
      return this.reading;
    }
    this.reading = (async () => {
      try {
        do {
          this.readAgain = false;
          await this.readOutbox();
        } while (this.readAgain && !this.stopped);
      } finally {
        this.reading = null;
      }
    })();
    return this.reading;
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    try {
      if (!this.leader) await this.campaign();
      if (this.leader) await this.read();
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
    // knex binds `?` by position: each `$n` becomes a `?` with its own copy of
    // parameter n (a statement may use `$1` twice, as readOutbox does).
    const bindings: unknown[] = [];
    const knexSql = sql.replace(/\$(\d+)/g, (_, n: string) => {
      bindings.push(params[Number(n) - 1]);
      return '?';
    });
    return this.o.db.raw(knexSql, bindings as never[]).then((r: { rows: R[] }) => r.rows);
  }

  /**
   * Publishes the rows in the outbox that were not handed over (other
   * processes' commits, rows left by a failure), oldest first, a batch per
   * statement; the statement also deletes what was published meanwhile.
   */
  private async readOutbox(): Promise<void> {
    for (;;) {
      if (this.stopped || !this.leader) return;
      const published = this.published;
      this.published = [];
      let rows: { id: string; type: string; event: string }[];
      try {
        rows = await this.query(
          `WITH done AS (DELETE FROM outbox WHERE id = ANY($1::bigint[]))
           SELECT id, event->>'type' AS type, event::text AS event FROM outbox
            WHERE NOT (id = ANY($1::bigint[])) ORDER BY id LIMIT ${BATCH}`,
          [published],
        );
      } catch (err) {
        this.published.push(...published);
        throw err;
      }
      await this.track(this.publish(rows.map((r) => ({ id: Number(r.id), type: r.type, event: r.event }))));
      if (rows.length < BATCH) return;
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

  /** XADDs, in one pipeline, the rows no other path is publishing or has published lately. */
  private async publish(rows: { id: number; type: string; event: string }[]): Promise<void> {
    const todo = rows.filter((r) => !this.recent.has(r.id));
    if (todo.length === 0) return;
    for (const row of todo) this.recent.add(row.id);
    const pipeline = this.o.redis.pipeline();
    for (const row of todo) {
      pipeline.xadd(this.o.streamKey, 'MAXLEN', '~', STREAM_MAXLEN, '*', 'e', row.event);
      if (ACCESS_EVENT_TYPES.has(row.type)) pipeline.xadd(this.o.accessStreamKey, 'MAXLEN', '~', ACCESS_STREAM_MAXLEN, '*', 'e', row.event);
    }
    try {
      const results = await pipeline.exec();
      const failed = results?.find(([err]) => err);
      if (failed) throw failed[0];
    } catch (err) {
      for (const row of todo) this.recent.delete(row.id); // published again by the next read
      throw err;
    }
    for (const row of todo) this.published.push(row.id);
    // A Set iterates in insertion order: drop the oldest.
    for (const id of this.recent) {
      if (this.recent.size <= RECENT_IDS) break;
      this.recent.delete(id);
    }
    this.o.metrics.eventsPublished.inc(todo.length);
    this.deleteSoon();
  }
}
