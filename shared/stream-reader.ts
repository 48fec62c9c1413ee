// One upstream of events: a dedicated Redis connection doing plain XREAD
// BLOCK over one or more streams of one hash slot (no consumer group: every
// replica reads everything it reads). It remembers the last entry id it saw
// of each stream and, after a lost connection, reads on from there, so
// listeners miss nothing. The gateway reads a shard of the event bus with one
// (shared/event-bus.ts: its durable and its live stream); the API reads the
// access stream with one to drop cached access.
//
// With an epoch key (a bus shard), every read also makes sure the shard has
// an epoch (SET NX) and reads it, in the same round trip, so the entries read
// are told with the epoch they belong to: one read after the streams were
// lost (the key is gone) gets the new one.
import { randomBytes } from 'node:crypto';
import type { AxidEvent } from './events.js';
import type { Logger } from './logger.js';
import { createRedis, type Redis } from './redis.js';
import { tracing } from './tracing.js';

export interface StreamReaderOptions {
  redisUrl: string;
  /** The streams read (one hash slot); listeners are told which by its index. */
  streamKeys: string[];
  /** The key of the shard's epoch (shared/event-bus.ts), for a bus shard. */
  epochKey?: string;
  /** Start after these ids (one per stream; null: after its newest entry, the default). */
  startAfter?: (string | null)[];
  log: Logger;
  blockMs: number;
  /** Called once per entry, in stream order (more listeners: subscribe()). */
  onEvent?: EntryListener;
}

/** `stream` is the index of the entry's stream in streamKeys; `trace` its trace context (field `t`), read only when tracing is on. */
export type EntryListener = (event: AxidEvent, entryId: string, stream: number, trace: string | undefined) => void;

const BATCH = 1000;
/**
 * A batch's entries are dispatched in turns of about this long: between two
 * turns the process's other work runs (a gateway's streams opening, its
 * database answers), which otherwise waited behind a whole batch. On a busy
 * gateway one batch fanned out to thousands of streams took seconds, and
 * streams took as long to open (docs/bench.md, "Runs of 2026-11-28 (sixth
 * session)", "Routing in turns, corked per batch").
 */
const TURN_MS = 20;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Milliseconds part of a stream entry id (`<ms>-<seq>`). */
export const entryTime = (id: string) => Number(id.slice(0, id.indexOf('-')));

/** A fresh epoch: a random word (shared/event-bus.ts). */
export const newEpoch = () => randomBytes(6).toString('base64url');

export class StreamReader {
  private readonly redis: Redis;
  /** The last id read of each stream; null until the start is known. */
  private lastIds: string[] | null;
  private stopped = false;
  private loop: Promise<void> | null = null;
  private started: Promise<void>;
  private markStarted!: () => void;
  private readonly listeners: EntryListener[] = [];
  private readonly heardListeners: (() => void)[] = [];
  private initialized = false;
  /** The shard's epoch as of the last read (with epochKey). */
  epoch = '';

  constructor(private readonly o: StreamReaderOptions) {
    this.redis = createRedis(o.redisUrl, 'axid-event-reader');
    this.redis.on('error', (err) => o.log.debug({ err: err.message }, 'event reader: redis connection error'));
    this.started = new Promise((resolve) => (this.markStarted = resolve));
    this.lastIds = null;
    if (o.onEvent) this.listeners.push(o.onEvent.bind(o));
  }

  /** Adds a listener called once per entry, in stream order. */
  subscribe(listener: EntryListener): void {
    this.listeners.push(listener);
  }

  /**
   * Adds a listener called after every read that answered (with entries or
   * after an idle block), once its entries were dispatched: up to then, every
   * entry published has been seen.
   */
  onHeard(listener: () => void): void {
    this.heardListeners.push(listener);
  }

  /** Starts reading from the current end of the streams (or after `startAfter`). */
  start(): void {
    this.loop ??= this.run();
  }

  /** Resolves once the starting position is known (events after it are read). */
  ready(): Promise<void> {
    return this.started;
  }

  /** The last id read of the first stream (after ready()). */
  get position(): string {
    return this.lastIds?.[0] ?? '0-0';
  }

  /** Whether the start position is known (position is real). */
  get isReady() {
    return this.initialized;
  }

  get isStopped() {
    return this.stopped;
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
    const { streamKeys, epochKey } = this.o;
    while (!this.stopped) {
      try {
        if (!this.initialized) {
          // The id of the newest entry of each stream (unless told where to
          // start), so nothing published from now on is skipped; the epoch.
          const pipeline = this.redis.pipeline();
          const given = streamKeys.map((_, i) => this.o.startAfter?.[i] ?? null);
          for (const [i, key] of streamKeys.entries()) if (given[i] === null) pipeline.xrevrange(key, '+', '-', 'COUNT', 1);
          if (epochKey) pipeline.set(epochKey, newEpoch(), 'NX').get(epochKey);
          const results = (await pipeline.exec()) ?? [];
          for (const [err] of results) if (err) throw err;
          let next = 0;
          this.lastIds = given.map((id) => id ?? (results[next++]![1] as [string, string[]][])[0]?.[0] ?? '0-0');
          if (epochKey) this.epoch = String(results[results.length - 1]![1]);
          this.initialized = true;
          this.markStarted();
          for (const heard of this.heardListeners) heard();
        }
        const lastIds = this.lastIds!;
        let res: [string, [string, string[]][]][] | null;
        if (epochKey) {
          const results =
            (await this.redis
              .pipeline()
              .set(epochKey, newEpoch(), 'NX')
              .get(epochKey)
              .xread('COUNT', BATCH, 'BLOCK', this.o.blockMs, 'STREAMS', ...streamKeys, ...lastIds)
              .exec()) ?? [];
          for (const [err] of results) if (err) throw err;
          this.epoch = String(results[1]![1]);
          res = results[2]![1] as typeof res;
        } else {
          res = (await this.redis.xread('COUNT', BATCH, 'BLOCK', this.o.blockMs, 'STREAMS', ...streamKeys, ...lastIds)) as typeof res;
        }
        backoff = 100;
        let turnStarted = performance.now();
        batch: for (const [key, entries] of res ?? []) {
          const stream = streamKeys.indexOf(key);
          for (const [id, fields] of entries) {
            if (performance.now() - turnStarted > TURN_MS) {
              // In order still: the next read waits for this batch's last entry.
              await nextTurn();
              if (this.stopped) break batch;
              turnStarted = performance.now();
            }
            lastIds[stream] = id;
            this.dispatch(id, fields, stream);
          }
        }
        for (const heard of this.heardListeners) heard();
      } catch (err) {
        if (this.stopped) break;
        this.o.log.warn({ err: (err as Error).message }, 'event reader: retrying');
        await new Promise((resolve) => setTimeout(resolve, backoff));
        backoff = Math.min(backoff * 2, 2000);
      }
    }
  }

  private dispatch(id: string, fields: string[], stream: number) {
    const event = parseEntry(fields);
    if (!event) {
      this.o.log.warn({ id }, 'event reader: skipped an entry without JSON event, type or address');
      return;
    }
    const trace = tracing ? traceOf(fields) : undefined;
    for (const listener of this.listeners) {
      try {
        listener(event, id, stream, trace);
      } catch (err) {
        this.o.log.error({ err, id, type: event.type }, 'event reader: a listener failed');
      }
    }
  }
}

/** The trace context of a stream entry (field `t`, relay/event-stream.ts), if it has one. */
export function traceOf(fields: string[]): string | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === 't') return fields[i + 1];
  return undefined;
}

/** The event of a stream entry (field `e`), or null when it is not one. */
export function parseEntry(fields: string[]): AxidEvent | null {
  const i = fields.indexOf('e');
  if (i < 0 || i % 2 !== 0) return null;
  let event: AxidEvent;
  try {
    event = JSON.parse(fields[i + 1] as string) as AxidEvent;
  } catch {
    return null;
  }
  if (!event || typeof event.type !== 'string' || !event.to || typeof event.to.workspace_id !== 'string') return null;
  return event;
}
