// The gateway's one upstream: a dedicated Redis connection doing plain
// XREAD BLOCK over the event stream (no consumer group: every replica reads
// everything). It remembers the last entry id it saw and, after a lost
// connection, reads on from there, so clients that stayed connected miss
// nothing.
import type { AxidEvent } from '../../shared/events.js';
import type { Logger } from '../../shared/logger.js';
import { createRedis, type Redis } from '../../shared/redis.js';

export interface StreamReaderOptions {
  redisUrl: string;
  streamKey: string;
  log: Logger;
  blockMs: number;
  /** Called once per entry, in stream order. */
  onEvent(event: AxidEvent, entryId: string): void;
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

  constructor(private readonly o: StreamReaderOptions) {
    this.redis = createRedis(o.redisUrl, 'axid-gateway-reader');
    this.redis.on('error', (err) => o.log.debug({ err: err.message }, 'gateway reader: redis connection error'));
    this.started = new Promise((resolve) => (this.markStarted = resolve));
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
        this.o.log.warn({ err: (err as Error).message }, 'gateway reader: retrying');
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
      this.o.log.warn({ id }, 'gateway reader: skipped an entry that is not JSON');
      return;
    }
    if (!event || typeof event.type !== 'string' || !event.to || typeof event.to.workspace_id !== 'string') {
      this.o.log.warn({ id }, 'gateway reader: skipped an entry without type or address');
      return;
    }
    try {
      this.o.onEvent(event, id);
    } catch (err) {
      this.o.log.error({ err, id, type: event.type }, 'gateway reader: routing an event failed');
    }
  }
}
