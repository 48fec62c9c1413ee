// A process's one upstream of events: a dedicated Redis connection doing plain
// XREAD BLOCK over the event stream (no consumer group: every replica reads
// everything). It remembers the last entry id it saw and, after a lost
// connection, reads on from there, so subscribers miss nothing. The gateway
// fans events out to streams; the API drops cached access the events change.
import type { AxidEvent } from './events.js';
import type { Logger } from './logger.js';
import { createRedis, type Redis } from './redis.js';

export interface StreamReaderOptions {
  redisUrl: string;
  streamKey: string;
  log: Logger;
  blockMs: number;
  /** Called once per entry, in stream order (more listeners: subscribe()). */
  onEvent?(event: AxidEvent, entryId: string): void;
}

const BATCH = 1000;

/** Milliseconds part of a stream entry id (`<ms>-<seq>`). */
export const entryTime = (id: string) => Number(id.slice(0, id.indexOf('-')));

export class StreamReader {
  private readonly redis: Redis;
  private lastId: string | null = null;
  private stopped = false;
  private loop: Promise<void> | null = null;
  private started: Promise<void>;
  private markStarted!: () => void;
  private readonly listeners: ((event: AxidEvent, entryId: string) => void)[] = [];

  constructor(private readonly o: StreamReaderOptions) {
    this.redis = createRedis(o.redisUrl, 'axid-event-reader');
    this.redis.on('error', (err) => o.log.debug({ err: err.message }, 'event reader: redis connection error'));
    this.started = new Promise((resolve) => (this.markStarted = resolve));
    if (o.onEvent) this.listeners.push(o.onEvent.bind(o));
  }

  /** Adds a listener called once per entry, in stream order. */
  subscribe(listener: (event: AxidEvent, entryId: string) => void): void {
    this.listeners.push(listener);
  }

  /** Starts reading from the current end of the stream. */
  start(): void {
    this.loop ??= this.run();
  }

  /** Resolves once the starting position is known (events after it are read). */
  ready(): Promise<void> {
    return this.started;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.markStarted();
    // Rejects the blocked XREAD at once; quit would wait for it to time out.
    this.redis.disconnect();
    await this.loop;
  }

  private async run(): Promise<void> {
    let backoff = 100;
    while (!this.stopped) {
      try {
        if (this.lastId === null) {
          // The id of the newest entry, so nothing published from now on is skipped.
          const newest = await this.redis.xrevrange(this.o.streamKey, '+', '-', 'COUNT', 1);
          this.lastId = newest[0]?.[0] ?? '0-0';
          this.markStarted();
        }
        const res = (await this.redis.xread('COUNT', BATCH, 'BLOCK', this.o.blockMs, 'STREAMS', this.o.streamKey, this.lastId)) as
          | [string, [string, string[]][]][]
          | null;
        backoff = 100;
        for (const [, entries] of res ?? []) {
          for (const [id, fields] of entries) {
            this.lastId = id;
            this.dispatch(id, fields);
          }
        }
      } catch (err) {
        if (this.stopped) break;
        this.o.log.warn({ err: (err as Error).message }, 'event reader: retrying');
        await new Promise((resolve) => setTimeout(resolve, backoff));
        backoff = Math.min(backoff * 2, 2000);
      }
    }
  }

  private dispatch(id: string, fields: string[]) {
    const i = fields.indexOf('e');
    if (i < 0 || i % 2 !== 0) return;
    let event: AxidEvent;
    try {
      event = JSON.parse(fields[i + 1] as string) as AxidEvent;
    } catch {
      this.o.log.warn({ id }, 'event reader: skipped an entry that is not JSON');
      return;
    }
    if (!event || typeof event.type !== 'string' || !event.to || typeof event.to.workspace_id !== 'string') {
      this.o.log.warn({ id }, 'event reader: skipped an entry without type or address');
      return;
    }
    for (const listener of this.listeners) {
      try {
        listener(event, id);
      } catch (err) {
        this.o.log.error({ err, id, type: event.type }, 'event reader: a listener failed');
      }
    }
  }
}
