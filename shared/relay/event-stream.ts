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
//
// No acknowledged event lost to a failover: Redis replicates asynchronously,
// so a primary may acknowledge an XADD and die before its replica has it.
// After every publish, and after reading which rows the streams have, the
// relay asks each primary it wrote to to WAIT (bounded: WAIT_MS) until one
// replica has its writes, where the primary has a replica at all (on a cluster:
// one not failed, connected or not). Until then
// publish (or the check) fails: the rows stay in the outbox, and the next
// check publishes again whatever the streams (then on the promoted replica)
// lack. A client tells a repeated event by its id (docs/realtime.md).
//
// On one node a batch is one MULTI; on a Redis Cluster one MULTI per shard
// (each shard's keys share a slot: shared/event-bus.ts), sent together.
import calculateSlot from 'cluster-key-slot';
import type { Cluster, Redis as RedisNode } from 'ioredis';
import { ACCESS_EVENT_TYPES, ACCESS_STREAM_MAXLEN } from '../events.js';
import { STREAM_MAXLEN, shardsOf, type BusKeys } from '../event-bus.js';
import { isCluster, type Redis } from '../redis.js';
import type { OutboxRow } from './outbox-table.js';

/** The longest a publish waits for a replica to have it. */
export const WAIT_MS = 500;
/** How long a primary's count of replicas is trusted. */
const REPLICAS_TTL_MS = 5000;

/** A primary that has a replica has not passed our writes to it yet (within WAIT_MS). */
export class NotReplicatedError extends Error {}

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
  /** Closes the stream's own connection, if it has one. */
  close?(): void;
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
  const replicas = new Map<RedisNode, { count: number; until: number }>();

  const trim = (): (string | number)[] => (o.retentionMs === null ? ['MAXLEN', '~', STREAM_MAXLEN] : ['MINID', '~', `${Date.now() - o.retentionMs}-0`]);

  /** The connection to the primary that holds a key (the one our writes to it went through). */
  function nodeOf(key: string): RedisNode | null {
    if (!isCluster(redis)) return redis;
    const [host, port] = ((redis as Cluster).slots[calculateSlot(key)]?.[0] ?? '').split(':');
    return (redis as Cluster).nodes('master').find((n) => n.options.host === host && String(n.options.port) === port) ?? null;
  }

  /**
   * The replicas that could take over from a primary. On a cluster, every
   * replica the cluster does not hold failed: one whose link to the primary
   * is down for a moment can still be promoted, without what the primary
   * took meanwhile (counting only the connected ones would stop waiting just
   * then). On one node, the connected ones.
   */
  async function replicaCount(node: RedisNode): Promise<number> {
    const known = replicas.get(node);
    if (known && known.until > Date.now()) return known.count;
    const count = isCluster(redis)
      ? promotableReplicas(String(await node.call('CLUSTER', 'NODES')))
      : Number(/connected_slaves:(\d+)/.exec(await node.info('replication'))?.[1] ?? 0);
    replicas.set(node, { count, until: Date.now() + REPLICAS_TTL_MS });
    return count;
  }

  /** Resolves once one replica of every primary holding `keys` has our writes; throws after WAIT_MS. */
  async function replicated(keys: string[]): Promise<void> {
    const nodes = new Set<RedisNode>();
    for (const key of keys) {
      const node = nodeOf(key);
      if (!node) throw new NotReplicatedError(`no primary known for ${key}`);
      nodes.add(node);
    }
    await Promise.all(
      [...nodes].map(async (node) => {
        if ((await replicaCount(node)) === 0) return;
        const acked = Number(await node.call('WAIT', 1, WAIT_MS));
        if (acked < 1) throw new NotReplicatedError(`no replica of ${node.options.host}:${node.options.port} confirmed the events within ${WAIT_MS} ms`);
      }),
    );
  }

  async function exec(multi: ReturnType<Redis['multi']>) {
    const results = await multi.exec();
    if (!results) throw new Error('the event stream transaction was aborted');
    const failed = results.find(([err]) => err);
    if (failed) throw failed[0];
  }

  return {
    ready: () => redis.status === 'ready',
    close: () => redis.disconnect(),
    async publish(rows) {
      const limit = trim();
      // One MULTI on one node; one per shard (and one for the access stream) on a cluster.
      const one = isCluster(redis) ? null : redis.multi();
      const perKey = new Map<string, ReturnType<Redis['multi']>>();
      const multiFor = (key: string) => {
        if (one) return one;
        let multi = perKey.get(key);
        if (!multi) perKey.set(key, (multi = redis.multi()));
        return multi;
      };
      for (const row of rows) {
        const outboxId = String(row.id);
        const targets = shards === 1 ? [0] : shardsOf(row.type, row.channelId, shards);
        const id = ids.next();
        for (const s of targets) {
          if (present.has(`${s}:${outboxId}`)) continue;
          const fields = targets.length > 1 ? ['e', row.event, 'o', outboxId, 'n', targets.length] : ['e', row.event, 'o', outboxId];
          if (row.trace) fields.push('t', row.trace); // the trace context (shared/tracing.ts)
          multiFor(bus.shards[s]!.events).xadd(bus.shards[s]!.events, ...limit, id, ...fields);
        }
        if (ACCESS_EVENT_TYPES.has(row.type)) multiFor(accessStreamKey).xadd(accessStreamKey, 'MAXLEN', '~', ACCESS_STREAM_MAXLEN, '*', 'e', row.event, 'o', outboxId);
      }
      if (one) await exec(one);
      else await Promise.all([...perKey.values()].map(exec));
      await replicated(one ? [bus.shards[0]!.events] : [...perKey.keys()]);
    },
    async recentOutboxIds(count) {
      const tails = await Promise.all(bus.shards.map((shard) => redis.xrevrange(shard.events, '+', '-', 'COUNT', count)));
      // What the streams have counts as published once a replica has it too.
      await replicated(bus.shards.map((shard) => shard.events));
      const seen = new Map<number, { found: number; of: number }>();
      present = new Set();
      tails.forEach((list, s) => {
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

/** From a primary's CLUSTER NODES: its replicas not flagged failed (`fail`; `fail?` is only suspected). */
export function promotableReplicas(clusterNodes: string): number {
  const nodes = clusterNodes
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [id, , flags = '', primary] = line.split(' ');
      return { id, flags: flags.split(','), primary };
    });
  const me = nodes.find((n) => n.flags.includes('myself'))?.id;
  return nodes.filter((n) => n.primary === me && !n.flags.some((f) => f === 'fail' || f === 'noaddr' || f === 'handshake')).length;
}

function fieldsOf(fields: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) out[fields[i]!] = fields[i + 1]!;
  return out;
}
