// The events on a stack's event bus (shared/event-bus.ts), every shard's
// durable and live (typing, presence) streams read and merged in id order,
// each event once (a membership change's copy on shard 0 left out).
import { compareIds } from '../../shared/relay/event-stream.js';
import type { Stack } from '../../services/stack.js';

export interface BusRecord {
  id: string;
  shard: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  event: any;
  /** The entry's outbox id (field `o`); NaN for a live (ephemeral) one. */
  outboxId: number;
  live: boolean;
}

export async function busRecords(s: Stack): Promise<BusRecord[]> {
  const out: BusRecord[] = [];
  const seen = new Set<number>();
  for (const shard of s.rt.bus.shards) {
    for (const live of [false, true]) {
      for (const [id, fields] of await s.rt.redis.xrange(live ? shard.live : shard.events, '-', '+')) {
        const f: Record<string, string> = {};
        for (let i = 0; i + 1 < fields.length; i += 2) f[fields[i]!] = fields[i + 1]!;
        const outboxId = Number(f.o);
        if (!live && seen.has(outboxId)) continue;
        seen.add(outboxId);
        out.push({ id, shard: shard.index, event: JSON.parse(f.e!), outboxId, live });
      }
    }
  }
  return out.sort((a, b) => compareIds(a.id, b.id));
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const busEvents = async (s: Stack): Promise<any[]> => (await busRecords(s)).map((r) => r.event);
