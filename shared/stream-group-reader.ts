// Reading one event stream as a consumer group: the processes of a role share
// its entries (each entry goes to one of them), and an entry is acknowledged
// only once handled, so a process that dies leaves its entries pending; the
// others take them over with XAUTOCLAIM once they have been idle for
// `claimIdleMs`. The event subscription deliverer reads this way
// (services/worker/event-deliveries.ts); the gateway and the API read
// everything with the plain reader (stream-reader.ts).
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { AxidEvent } from './events.js';
import type { Logger } from './logger.js';
import { createRedis, type Redis } from './redis.js';

/** One stream entry: the event, its entry id and, for outbox events, the outbox id (event-stream.ts field `o`). */
export interface GroupEntry {
  /** The reader's label of its stream (entry ids of ephemeral events are unique per stream only). */
  stream: string;
  entryId: string;
  outboxId: string | null;
  event: AxidEvent;
  /** Its trace context (field `t`: shared/tracing.ts), if it has one. */
  trace?: string;
}

export interface StreamGroupReaderOptions {
  redisUrl: string;
  streamKey: string;
  /** A short name of the stream, given to its entries. */
  label: string;
  group: string;
  log: Logger;
  /** Handles a batch; the entries are acknowledged once it resolves. A rejection leaves them pending (claimed again later). */
  handle(entries: GroupEntry[]): Promise<void>;
  /** How long an entry stays pending before another consumer claims it. */
  claimIdleMs: number;
  blockMs?: number;
  batch?: number;
}

/** A consumer name unique to this process and reader: a restarted process never takes over a dead one's identity. */
const consumerName = () => `${os.hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;

export class StreamGroupReader {
  private readonly redis: Redis;
  private readonly consumer = consumerName();
  private stopped = false;
  private loop: Promise<void> | null = null;
  private lastClaimAt = 0;

  constructor(private readonly o: StreamGroupReaderOptions) {
    this.redis = createRedis(o.redisUrl, 'axid-event-group-reader');
    this.redis.on('error', (err) => o.log.debug({ err: err.message }, 'event group reader: redis connection error'));
  }

  /** Creates the group at the stream's current end if it does not exist (events before it are not the group's). */
  async ensureGroup(): Promise<void> {
    try {
      await this.redis.xgroup('CREATE', this.o.streamKey, this.o.group, '$', 'MKSTREAM');
    } catch (err) {
      if (!String((err as Error).message).includes('BUSYGROUP')) throw err;
    }
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    // Rejects the blocked XREADGROUP at once.
    this.redis.disconnect();
    await this.loop;
  }

  private async run(): Promise<void> {
    let backoff = 100;
    let grouped = false;
    while (!this.stopped) {
      try {
        if (!grouped) {
          await this.ensureGroup();
          grouped = true;
        }
        if (Date.now() - this.lastClaimAt >= this.o.claimIdleMs / 2) await this.claimAbandoned();
        const res = (await this.redis.xreadgroup(
          'GROUP',
          this.o.group,
          this.consumer,
          'COUNT',
          this.o.batch ?? 200,
          'BLOCK',
          Math.min(this.o.blockMs ?? 2_000, Math.max(100, this.o.claimIdleMs / 2)),
          'STREAMS',
          this.o.streamKey,
          '>',
        )) as [string, [string, string[] | null][]][] | null;
        backoff = 100;
        for (const [, entries] of res ?? []) await this.handle(entries);
      } catch (err) {
        if (this.stopped) break;
        // NOGROUP: the stream was deleted (tests clean up, or an operator): create the group again.
        if (String((err as Error).message).includes('NOGROUP')) grouped = false;
        this.o.log.warn({ err: (err as Error).message }, 'event group reader: retrying');
        await new Promise((resolve) => setTimeout(resolve, backoff));
        backoff = Math.min(backoff * 2, 2000);
      }
    }
  }

  /** Takes over entries another consumer left pending longer than claimIdleMs (it died, or lost its connection). */
  private async claimAbandoned(): Promise<void> {
    this.lastClaimAt = Date.now();
    let cursor = '0-0';
    do {
      const [next, entries] = (await this.redis.xautoclaim(this.o.streamKey, this.o.group, this.consumer, this.o.claimIdleMs, cursor, 'COUNT', 200)) as [
        string,
        [string, string[] | null][],
        ...unknown[],
      ];
      if (entries.length > 0) this.o.log.info({ count: entries.length, stream: this.o.streamKey }, 'event group reader: claimed abandoned entries');
      await this.handle(entries);
      cursor = next;
    } while (cursor !== '0-0' && !this.stopped);
  }

  private async handle(raw: [string, string[] | null][]): Promise<void> {
    if (raw.length === 0) return;
    const entries: GroupEntry[] = [];
    for (const [entryId, fields] of raw) {
      const entry = parse(this.o.label, entryId, fields);
      if (entry) entries.push(entry);
      else this.o.log.warn({ id: entryId }, 'event group reader: skipped an entry without an event');
    }
    if (entries.length > 0) await this.o.handle(entries);
    // Acknowledged only now: a crash before this leaves them to XAUTOCLAIM.
    await this.redis.xack(this.o.streamKey, this.o.group, ...raw.map(([id]) => id));
  }
}

function parse(stream: string, entryId: string, fields: string[] | null): GroupEntry | null {
  // A trimmed entry (MAXLEN) comes back from XAUTOCLAIM without fields.
  if (!fields) return null;
  let event: AxidEvent | null = null;
  let outboxId: string | null = null;
  let trace: string | undefined;
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i] === 'e') {
      try {
        event = JSON.parse(fields[i + 1] as string) as AxidEvent;
      } catch {
        return null;
      }
    } else if (fields[i] === 'o') outboxId = fields[i + 1] as string;
    else if (fields[i] === 't') trace = fields[i + 1] as string;
  }
  if (!event || typeof event.type !== 'string' || !event.to || typeof event.to.workspace_id !== 'string') return null;
  return trace ? { stream, entryId, outboxId, event, trace } : { stream, entryId, outboxId, event };
}
