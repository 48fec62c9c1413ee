// The event bus: EVENT_SHARDS Redis streams the relay publishes to and the
// gateways read (docs/realtime.md, "How it works"; docs/architecture.md, "Hash
// tags"). With one shard every event goes to shard 0. With more, shard 0
// holds the workspace-wide events (and those addressed to named users) and a
// channel's events go to shard 1 + hash(channel) % (shards - 1), so one
// channel's events keep their order on one stream. An event that changes who
// is in a channel also goes, under the same entry id, to shard 0: every
// gateway with a stream in the workspace reads shard 0 and so learns of a
// join to a channel whose shard it does not read yet.
//
// Each shard is three keys in one hash slot (the shard's hash tag), so one
// XREAD reads both of its streams and one MULTI writes them:
// - `{<prefix>bus:<n>}` the durable events, entry ids given by the relay;
// - `{<prefix>bus:<n>}:live` ephemeral events (typing, presence), ids by Redis;
// - `{<prefix>bus:<n>}:epoch` a random word that changes when the shard's
//   streams were lost (stream ids from before it cannot be replayed).
import type { AxidEvent, EventAddress, EventType } from './events.js';

export interface ShardKeys {
  index: number;
  events: string;
  live: string;
  epoch: string;
}

export interface BusKeys {
  shards: ShardKeys[];
}

export function busKeys(prefix: string, shards: number): BusKeys {
  return {
    shards: Array.from({ length: shards }, (_, index) => {
      const tag = `{${prefix}bus:${index}}`;
      return { index, events: tag, live: `${tag}:live`, epoch: `${tag}:epoch` };
    }),
  };
}

/** The events that add or remove someone to or from a channel: also published to shard 0. */
export const MEMBERSHIP_EVENT_TYPES: ReadonlySet<string> = new Set<EventType>([
  'channel.member_added',
  'channel.member_removed',
  'dm.created',
  'channel.created',
]);

/** FNV-1a, 32 bits: cheap and stable across processes and releases. */
function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** The shard a channel's events go to. */
export const channelShard = (channelId: string, shards: number): number => (shards === 1 ? 0 : 1 + (hash(channelId) % (shards - 1)));

/**
 * The channel an event is about, for sharding: its address's channel, or the
 * new conversation of a `dm.created` (addressed to its members by user).
 * The relay reads the same from the outbox row (relay/outbox-table.ts).
 */
export function channelOf(event: Pick<AxidEvent, 'type' | 'to' | 'data'>): string | undefined {
  if (event.to.scope === 'channel') return event.to.channel_id;
  if (event.type === 'dm.created') return (event.data.conversation as { id?: string } | undefined)?.id;
  return undefined;
}

/** The shard an event belongs to (its home): its channel's, else shard 0. */
export const homeShard = (channelId: string | undefined | null, shards: number): number => (channelId ? channelShard(channelId, shards) : 0);

/** Every shard an event is written to: its home, and shard 0 for a membership change. */
export function shardsOf(type: string, channelId: string | undefined | null, shards: number): number[] {
  const home = homeShard(channelId, shards);
  return home !== 0 && MEMBERSHIP_EVENT_TYPES.has(type) ? [home, 0] : [home];
}

export const STREAM_MAXLEN = 100_000;
/** Ephemeral events are only read live: a short stream is enough. */
export const LIVE_MAXLEN = 10_000;

/** The live stream an ephemeral event goes to (events.ts publishEphemeral). */
export const liveKeyOf = (bus: BusKeys, to: EventAddress): string =>
  bus.shards[homeShard(to.scope === 'channel' ? to.channel_id : undefined, bus.shards.length)]!.live;
