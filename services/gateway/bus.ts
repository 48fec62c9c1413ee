// The gateway's side of the event bus (shared/event-bus.ts): one reader per
// shard, where each shard stands, the ids frames carry, and the replay of a
// resumed stream.
//
// A frame's id (level 3) is where this gateway's readers stood when the frame
// was written: for each shard read, `<shard>.<epoch>.<last entry id>`, joined
// by commas. Every entry up to those positions that the connection may see was
// written to it before the frame (a reader dispatches in order), so a replay
// from them misses nothing and repeats nothing, whichever gateway serves it.
// The relay numbers the entries of all shards with one sequence, so the
// entries of several shards merge into the order they were committed in.
import type { AxidEvent } from '../../shared/events.js';
import type { BusKeys } from '../../shared/event-bus.js';
import { channelOf, homeShard } from '../../shared/event-bus.js';
import type { Logger } from '../../shared/logger.js';
import type { Redis } from '../../shared/redis.js';
import { compareIds } from '../../shared/relay/event-stream.js';
import { StreamReader, entryTime, parseEntry } from '../../shared/stream-reader.js';

/** A position in the bus: per shard, its epoch and the last entry id seen. */
export type BusPosition = Map<number, { epoch: string; id: string }>;

/** An entry read from the bus, as listeners get it. */
export interface BusEntry {
  event: AxidEvent;
  id: string;
  shard: number;
  /** False for ephemeral events (the shard's live stream): never replayed. */
  durable: boolean;
  /** A membership change's copy on shard 0 (its home shard is another). */
  copy: boolean;
  /** Its trace context, when tracing is on and it has one (shared/tracing.ts). */
  trace?: string;
}

const ID_PATTERN = /^\d{1,16}-\d{1,16}$/;

export function formatPosition(p: BusPosition): string {
  const parts: string[] = [];
  for (const [shard, { epoch, id }] of p) parts.push(`${shard}.${epoch}.${id}`);
  return parts.join(',');
}

/** Parses a frame id; null when it is not one. */
export function parsePosition(text: string): BusPosition | null {
  if (text.length === 0 || text.length > 2048) return null;
  const p: BusPosition = new Map();
  for (const part of text.split(',')) {
    const [shard, epoch, id, extra] = part.split('.');
    if (extra !== undefined || !shard || !/^\d{1,3}$/.test(shard) || !epoch || !/^[A-Za-z0-9_-]{1,32}$/.test(epoch) || !id || !ID_PATTERN.test(id)) return null;
    p.set(Number(shard), { epoch, id });
  }
  return p;
}

export interface BusOptions {
  bus: BusKeys;
  /** How long a shard no stream needs any more is still read (a stream may come back). */
  lingerMs?: number;
  /** Told the number of shards read whenever it changes. */
  onReaders?(count: number): void;
  redisUrl: string;
  /** Commands (the resume checks and replay reads). */
  redis: Redis;
  log: Logger;
  blockMs: number;
  retentionMs: number;
  onEntry(entry: BusEntry): void;
  /** Told after each read, once its entries were all given to onEntry (in turns: shared/stream-reader.ts). */
  onBatchEnd(): void;
}

/**
 * Where a replay of `shard` starts: the client's position there, or, for a
 * shard its gateway did not read (no channel of the client's then), the
 * oldest position the id names.
 */
export function startOf(from: BusPosition, shard: number): string {
  return from.get(shard)?.id ?? [...from.values()].map((p) => p.id).sort(compareIds)[0]!;
}

/** How long a reader started for a join waits to be needed (the join routed from it). */
const JOIN_GRACE_MS = 10_000;
/** Entries read per XRANGE of a replay. */
const REPLAY_PAGE = 1000;
/** How long a resume waits for this gateway's readers to reach the position the client has seen. */
const CATCH_UP_MS = 2000;

/** The id just before `id` (a reader started after it reads `id` first). */
export function idBefore(id: string): string {
  const [ms, n] = id.split('-') as [string, string];
  return n !== '0' ? `${ms}-${BigInt(n) - 1n}` : `${Number(ms) - 1}-18446744073709551615`;
}

/**
 * Reads only the shards this gateway's streams need: shard 0 always (the
 * workspace-wide events, and the membership copies that tell of a join), a
 * channel shard while a user connected here is a member of one of its
 * channels (counted by need()/release(), from the routing index). A reader
 * started for a stream that opens starts at the shard's newest entry, before
 * the stream's init is written; one started for a join read from shard 0
 * starts just before the join's entry, so that the join and everything after
 * it come from the channel's own shard, in order: no gap either way.
 */
export class GatewayBus {
  private readonly readers = new Map<number, StreamReader>();
  private readonly shards: number;
  private readonly needs = new Map<number, number>();
  private readonly stopping = new Map<number, NodeJS.Timeout>();
  private closed = false;

  constructor(private readonly o: BusOptions) {
    this.shards = o.bus.shards.length;
    this.startReader(0);
  }

  /** The shards read now (metrics, tests). */
  get reading(): number[] {
    return [...this.readers.keys()].sort((a, b) => a - b);
  }

  /** Whether a shard is read here. */
  reads(shard: number): boolean {
    return this.readers.has(shard);
  }

  /** A channel of `shard` is needed here (a member connected here). */
  need(shard: number) {
    this.needs.set(shard, (this.needs.get(shard) ?? 0) + 1);
    const timer = this.stopping.get(shard);
    if (timer) clearTimeout(timer);
    this.stopping.delete(shard);
    if (!this.readers.has(shard)) this.startReader(shard);
  }

  /** A channel of `shard` is no longer needed here. */
  release(shard: number) {
    const left = (this.needs.get(shard) ?? 1) - 1;
    if (left > 0) this.needs.set(shard, left);
    else {
      this.needs.delete(shard);
      this.stopSoon(shard);
    }
  }

  /** Starts reading `shard` from just before `id` (a join read from shard 0's copy), unless it is read already. */
  startBefore(shard: number, id: string) {
    if (this.readers.has(shard) || this.closed) return;
    this.startReader(shard, idBefore(id));
    // Needed once the join is routed from it; if not (the user left meanwhile), stopped later.
    if (!this.needs.has(shard)) this.stopSoon(shard, Math.max(JOIN_GRACE_MS, this.o.lingerMs ?? 0));
  }

  private stopSoon(shard: number, afterMs = this.o.lingerMs ?? 10_000) {
    if (shard === 0 || this.stopping.has(shard)) return;
    const timer = setTimeout(() => {
      this.stopping.delete(shard);
      if (this.needs.has(shard)) return;
      const reader = this.readers.get(shard);
      this.readers.delete(shard);
      this.o.onReaders?.(this.readers.size);
      void reader?.stop();
    }, afterMs);
    timer.unref();
    this.stopping.set(shard, timer);
  }

  private startReader(index: number, after?: string) {
    if (this.closed) return;
    const keys = this.o.bus.shards[index]!;
    const reader = new StreamReader({
      redisUrl: this.o.redisUrl,
      streamKeys: [keys.events, keys.live],
      epochKey: keys.epoch,
      ...(after ? { startAfter: [after, null] } : {}),
      log: this.o.log,
      blockMs: this.o.blockMs,
    });
    reader.subscribe((event, id, stream, trace) => {
      if (this.readers.get(index) !== reader) return; // stopped meanwhile
      const durable = stream === 0;
      this.o.onEntry({ event, id, shard: index, durable, copy: durable && index === 0 && this.shards > 1 && homeShard(channelOf(event), this.shards) !== 0, trace });
    });
    reader.onHeard(() => this.o.onBatchEnd());
    reader.start();
    this.readers.set(index, reader);
    this.o.onReaders?.(this.readers.size);
  }

  /** Resolves once every reader knows where it starts. */
  async ready(): Promise<void> {
    await Promise.all([...this.readers.values()].map((r) => r.ready()));
  }

  /** Where the readers stand now. */
  position(): BusPosition {
    const p: BusPosition = new Map();
    for (const [shard, reader] of this.readers) if (reader.isReady) p.set(shard, { epoch: reader.epoch, id: reader.position });
    return p;
  }

  /** The id of a frame written now. */
  frameId(): string {
    return formatPosition(this.position());
  }

  /**
   * Whether a stream can resume from `from`: every shard read here is in it,
   * with the epoch the shard has now, no entry after it trimmed, and not older
   * than the retention. Waits (briefly) for this gateway's readers to reach
   * it, so that live frames never repeat what the client already has.
   */
  async canResume(from: BusPosition): Promise<boolean> {
    if (!from.has(0)) return false;
    let newest = 0;
    for (const at of from.values()) newest = Math.max(newest, entryTime(at.id));
    if (newest < Date.now() - this.o.retentionMs) return false;
    const checks = await Promise.all(
      [...from].map(async ([shard, at]) => {
        const keys = this.o.bus.shards[shard];
        if (!keys) return false;
        const [[epochErr, epoch], [infoErr, info]] = ((await this.o.redis.pipeline().get(keys.epoch).xinfo('STREAM', keys.events).exec()) ?? []) as [
          Error | null,
          unknown,
        ][] as [[Error | null, string | null], [Error | null, unknown[]]];
        if (epochErr || epoch !== at.epoch) return false;
        if (infoErr) return at.id === '0-0'; // no stream: nothing was ever published to it
        const i = info.indexOf('max-deleted-entry-id');
        return i < 0 || compareIds(at.id, String(info[i + 1])) >= 0;
      }),
    );
    if (!checks.every(Boolean)) return false;
    // The shards read here must have reached what the client has seen, or
    // live frames would repeat it. (A shard started later starts at its newest entry.)
    const deadline = Date.now() + CATCH_UP_MS;
    for (;;) {
      const now = this.position();
      if ([...now].every(([shard, p]) => !from.has(shard) || compareIds(p.id, from.get(shard)!.id) >= 0)) return true;
      if (Date.now() > deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /**
   * The durable entries after `from` up to `to` (the shards read here), merged in id order; membership copies skipped where the home
   * shard is read too.
   */
  async entriesBetween(from: BusPosition, to: BusPosition): Promise<BusEntry[]> {
    const perShard = await Promise.all(
      [...to].map(async ([shard, end]) => {
        const out: BusEntry[] = [];
        let start = startOf(from, shard);
        if (compareIds(start, end.id) >= 0) return out;
        for (;;) {
          const page = (await this.o.redis.xrange(this.o.bus.shards[shard]!.events, `(${start}`, end.id, 'COUNT', REPLAY_PAGE)) as [string, string[]][];
          for (const [id, fields] of page) {
            const event = parseEntry(fields);
            const home = event ? homeShard(channelOf(event), this.shards) : 0;
            const copy = shard === 0 && home !== 0;
            if (event && !(copy && to.has(home))) out.push({ event, id, shard, durable: true, copy });
          }
          if (page.length < REPLAY_PAGE) return out;
          start = page[page.length - 1]![0];
        }
      }),
    );
    return perShard.flat().sort((a, b) => compareIds(a.id, b.id));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.stopping.values()) clearTimeout(timer);
    this.stopping.clear();
    const readers = [...this.readers.values()];
    this.readers.clear();
    await Promise.all(readers.map((r) => r.stop()));
  }
}
