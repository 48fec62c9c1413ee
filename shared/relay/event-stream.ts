// Where the relay publishes: the Redis event stream every gateway and API
// process reads (shared/stream-reader.ts), and the small access stream for
// the events that change who may do what (events.ts ACCESS_EVENT_TYPES).
// Each entry carries its outbox id (field `o`, after the event in `e`), so a
// relay can tell which rows the stream already has.
import { ACCESS_EVENT_TYPES, ACCESS_STREAM_MAXLEN, STREAM_MAXLEN } from '../events.js';
import type { Redis } from '../redis.js';
import type { OutboxRow } from './outbox-table.js';

export interface EventStream {
  /** Whether Redis is connected (publishing now would wait in ioredis's offline queue). */
  ready(): boolean;
  /** Appends the rows in order, all of them or none (one MULTI). */
  publish(rows: OutboxRow[]): Promise<void>;
  /** The outbox ids among the stream's last `count` entries. */
  recentOutboxIds(count: number): Promise<number[]>;
}

export function redisEventStream(redis: Redis, streamKey: string, accessStreamKey: string): EventStream {
  return {
    ready: () => redis.status === 'ready',
    async publish(rows) {
      const multi = redis.multi();
      for (const row of rows) {
        const id = String(row.id);
        multi.xadd(streamKey, 'MAXLEN', '~', STREAM_MAXLEN, '*', 'e', row.event, 'o', id);
        if (ACCESS_EVENT_TYPES.has(row.type)) multi.xadd(accessStreamKey, 'MAXLEN', '~', ACCESS_STREAM_MAXLEN, '*', 'e', row.event, 'o', id);
      }
      const results = await multi.exec();
      if (!results) throw new Error('the event stream transaction was aborted');
      const failed = results.find(([err]) => err);
      if (failed) throw failed[0];
    },
    async recentOutboxIds(count) {
      const entries = await redis.xrevrange(streamKey, '+', '-', 'COUNT', count);
      const ids: number[] = [];
      for (const [, fields] of entries) {
        const i = fields.indexOf('o');
        if (i >= 0 && i % 2 === 0) ids.push(Number(fields[i + 1]));
      }
      return ids;
    },
  };
}
