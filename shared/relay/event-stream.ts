// Where the relay publishes: the shards of the event bus (shared/event-bus.ts)
// every gateway reads, and the small access stream for the events that change
// who may do what (events.ts ACCESS_EVENT_TYPES), which every API process reads.
//
// The relay, being the one publisher per database, numbers the entries itself:
// each row gets the next id of one sequence (`<ms>-<n>`, the relay's clock,
// never going back), written as the explicit entry id on every shard it goes
// to. One id so orders the entries of all shards (a gateway merges them for a
// replay) and a membership change has the same id on its channel's shard and
// on shard 0. Each entry carries its outbox id (field `o`), so a relay can
// tell which rows the streams already have, and the number of shards it went
// to (`n`, when more than one).
import { ACCESS_EVENT_TYPES, ACCESS_STREAM_MAXLEN } from '../events.js';
import { STREAM_MAXLEN, shardsOf, type BusKeys } from '../event-bus.js';
import type { Redis } from '../redis.js';
import type { OutboxRow } from './outbox-table.js';

export interface EventStream {
  /** Whether Redis is connected (publishing now would wait in ioredis's offline queue). */
  ready(): boolean;
  /** Appends the rows in order, all of them or none per shard (one MULTI a shard). */
  publish(rows: OutboxRow[]): Promise<void>;
  /**
   * The outbox ids among the last `count` entries of every shard that every
   * shard they go to has; also learns where the id sequence stands.
   */
  recentOutboxIds(count: number): Promise<number[]>;
}

export interface EventStreamOptions {
  bus: BusKeys;
  accessStreamKey: string;
  /** Level 3 keeps entries for replay this long (trim by MINID); else by length. */
  retentionMs: number | null;
}

/** Compares stream ids `<ms>-<n>`. */
export function compareIds(a: string, b: string): number {
  const [am, an] = a.split('-').map(Number) as [number, number];
  const [bm, bn] = b.split('-').map(Number) as [number, number];
  return am !== bm ? am - bm : an - bn;
}

/** The relay's id sequence: `<ms>-<n>`, from its clock, strictly increasing. */
export class IdSequence {
  private ms = 0;
  private n = 0;

  /** Never hands out an id at or below `id` from now on. */
  after(id: string) {
    const [ms, n] = id.split('-').map(Number) as [number, number];
    if (ms > this.ms || (ms === this.ms && n >= this.n)) {
      this.ms = ms;
      this.n = n;
    }
  }

  next(now = Date.now()): string {
    if (now > this.ms) {
      this.ms = now;
      this.n = 0;
    } else this.n++;
    return `${this.ms}-${this.n}`;
  }
}

export function redisEventStream(redis: Redis, o: EventStreamOptions): EventStream {
  const { bus, accessStreamKey } = o;
  const shards = bus.shards.length;
  const ids = new IdSequence();
  /** `<shard>:<outbox id>` entries found by the last recentOutboxIds (a batch half applied is completed, not doubled). */
  let present = new Set<string>();

  const trim = (): (string | number)[] => (o.retentionMs === null ? ['MAXLEN', '~', STREAM_MAXLEN] : ['MINID', '~', `${Date.now() - o.retentionMs}-0`]);

  return {
    ready: () => redis.status === 'ready',
    async publish(rows) {
      const multi = redis.multi();
      const limit = trim();
      for (const row of rows) {
        const outboxId = String(row.id);
        const targets = shards === 1 ? [0] : shardsOf(row.type, row.channelId, shards);
        const id = ids.next();
        for (const s of targets) {
          if (present.has(`${s}:${outboxId}`)) continue;
          const fields = targets.length > 1 ? ['e', row.event, 'o', outboxId, 'n', targets.length] : ['e', row.event, 'o', outboxId];
          multi.xadd(bus.shards[s]!.events, ...limit, id, ...fields);
        }
        if (ACCESS_EVENT_TYPES.has(row.type)) multi.xadd(accessStreamKey, 'MAXLEN', '~', ACCESS_STREAM_MAXLEN, '*', 'e', row.event, 'o', outboxId);
      }
      const results = await multi.exec();
      if (!results) throw new Error('the event stream transaction was aborted');
      const failed = results.find(([err]) => err);
      if (failed) throw failed[0];
    },
    async recentOutboxIds(count) {
      const pipeline = redis.pipeline();
      for (const shard of bus.shards) pipeline.xrevrange(shard.events, '+', '-', 'COUNT', count);
      const results = (await pipeline.exec()) ?? [];
      const seen = new Map<number, { found: number; of: number }>();
      present = new Set();
      results.forEach(([err, entries], s) => {
        if (err) throw err;
        const list = entries as [string, string[]][];
        if (list[0]) ids.after(list[0][0]);
        for (const [, fields] of list) {
          const f = fieldsOf(fields);
          if (f.o === undefined) continue;
          const outboxId = Number(f.o);
          present.add(`${s}:${outboxId}`);
          const entry = seen.get(outboxId) ?? { found: 0, of: Number(f.n ?? 1) };
          entry.found++;
          seen.set(outboxId, entry);
        }
      });
      return [...seen].filter(([, e]) => e.found >= e.of).map(([id]) => id);
    },
  };
}

function fieldsOf(fields: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) out[fields[i]!] = fields[i + 1]!;
  return out;
}
