// Moves committed outbox rows to the Redis stream. One relay per database is
// active at a time (a session advisory lock elects it), so rows reach the
// stream in the order their transactions became visible: commit order.
// Rows are deleted only after XADD succeeded, so a Redis outage delays events
// and loses none.
import pg from 'pg';
import type { Knex } from 'knex';
import type { Logger } from './logger.js';
import type { Redis } from './redis.js';
import { OUTBOX_CHANNEL, STREAM_MAXLEN } from './events.js';
import type { Metrics } from './metrics.js';

const RELAY_LOCK_KEY = 0x41584945;
const BATCH = 500;
const POLL_MS = 1000;
/** How long stop() waits for a drain in flight (it waits on Redis while Redis is away). */
const STOP_WAIT_MS = 2000;

export interface RelayOptions {
  db: Knex;
  databaseUrl: string;
  redis: Redis;
  streamKey: string;
  log: Logger;
  metrics: Metrics;
  /** false for the single-connection embedded database: poll through the pool instead. */
  listen: boolean;
}

export class OutboxRelay {
  private client: pg.Client | null = null;
  private leader = false;
  private stopped = false;
  private draining: Promise<void> | null = null;
  private again = false;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly o: RelayOptions) {}

  start(): void {
    void this.tick();
  }

  /** Drains whatever is pending now; resolves when the outbox was seen empty. */
  kick(): Promise<void> {
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
    // Rows not yet deleted stay in the outbox for the next relay: nothing is lost
    // by not waiting for a Redis that does not answer.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.draining?.catch(() => undefined),
      new Promise((resolve) => (timer = setTimeout(resolve, STOP_WAIT_MS))),
    ]);
    clearTimeout(timer);
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
      client.on('notification', () => {
        if (this.leader) void this.kick().catch((err) => this.o.log.warn({ err }, 'outbox relay: drain failed'));
      });
      await client.connect();
      this.client = client;
    }
    const { rows } = await this.client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [RELAY_LOCK_KEY]);
    if (rows[0]?.locked) {
      await this.client.query(`LISTEN ${OUTBOX_CHANNEL}`);
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

  private async drain(): Promise<void> {
    for (;;) {
      if (this.stopped || !this.leader) return;
      const rows: { id: number; event: unknown }[] = await this.o.db('outbox').select('id', 'event').orderBy('id').limit(BATCH);
      if (rows.length === 0) return;
      const pipeline = this.o.redis.pipeline();
      for (const row of rows) {
        pipeline.xadd(this.o.streamKey, 'MAXLEN', '~', STREAM_MAXLEN, '*', 'e', JSON.stringify(row.event));
      }
      const results = await pipeline.exec();
      const failed = results?.find(([err]) => err);
      if (failed) throw failed[0];
      await this.o.db('outbox')
        .whereIn(
          'id',
          rows.map((r) => r.id),
        )
        .delete();
      this.o.metrics.eventsPublished.inc(rows.length);
      if (rows.length < BATCH) return;
    }
  }
}
