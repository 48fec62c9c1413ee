// Caches the two lookups every API request makes before its real work: which
// caller a key belongs to, and whether that caller may read a channel. Entries
// are dropped by the events that change them — at once in the process that
// made the change, and in every other replica when the event reaches its
// stream reader — with a short lifetime as a backstop. Without a stream
// reader (a worker-only process) nothing is cached.
//
// The cache is only as good as the stream that invalidates it: while that is
// away (Redis paused or down, the reader not answering), a revocation made on
// another replica never arrives. So entries are served only while the reader
// has been heard from within STALE_AFTER_MS (its XREAD blocks for
// ACCESS_STREAM_BLOCK_MS at most, then answers even when nothing happened);
// past that every lookup goes to the database (fail closed), and when the
// reader is heard again everything cached before is dropped (issue 33: a key
// revoked on one replica was accepted by another for 30 s while Redis was
// paused).
//
// A cached caller carries its key's limits (scopes, conversation_ids:
// shared/scopes.ts), which never change after the key is made, so they are
// as fresh as the key. Channel access is cached per user, not per key: a
// key's conversations are applied before it is asked
// (services/core/channels/channels.access.ts requireReadable).
import type { Actor } from './auth.js';
import { ACCESS_EVENT_TYPES, type AxidEvent } from './events.js';

const TTL_MS = 30_000;
/** How long the access stream's reader waits on an idle stream before answering (services/stack.ts). */
export const ACCESS_STREAM_BLOCK_MS = 1_000;
/** Without word from the reader for this long, nothing cached is served: one idle read and a second of slack. */
export const STALE_AFTER_MS = ACCESS_STREAM_BLOCK_MS + 1_000;
const MAX_ENTRIES = 50_000;

interface Entry<T> {
  value: T;
  until: number;
}

export interface ChannelAccess {
  channel: object;
  isMember: boolean;
}

export class AccessCache {
  private readonly actors = new Map<string, Entry<Actor>>();
  private readonly access = new Map<string, Entry<ChannelAccess>>();
  private readonly hooks = new Map<string, Entry<object>>();
  /**
   * Bumped by every invalidation. A lookup notes it before reading the
   * database and caches its answer only if no invalidation happened
   * meanwhile, so a read that raced a change never outlives it.
   */
  private generation = 0;
  /** When the invalidation stream's reader last answered (everything published before is applied). */
  private heardAt = -Infinity;
  private readonly staleAfterMs: number;
  private readonly now: () => number;

  constructor(
    readonly enabled: boolean,
    o: { staleAfterMs?: number; now?: () => number } = {},
  ) {
    this.staleAfterMs = o.staleAfterMs ?? STALE_AFTER_MS;
    this.now = o.now ?? Date.now;
  }

  /**
   * The reader answered: every event published until now has been applied.
   * After a silence longer than the bound, what was cached before it may have
   * missed an event: all of it goes.
   */
  heard(): void {
    if (!this.fresh()) {
      this.generation++;
      this.clear();
    }
    this.heardAt = this.now();
  }

  /** Whether cached entries may be served: the reader was heard from within the bound. */
  fresh(): boolean {
    return this.now() - this.heardAt < this.staleAfterMs;
  }

  /** Call before the database read whose answer set*() will cache. */
  mark(): number {
    return this.generation;
  }

  getActor(keyHash: string): Actor | undefined {
    return this.read(this.actors, keyHash);
  }

  /** Caches an actor until the key expires or the lifetime ends, whichever comes first. */
  setActor(mark: number, keyHash: string, actor: Actor, keyExpiresAt: Date | null): void {
    const until = Math.min(this.now() + TTL_MS, keyExpiresAt ? keyExpiresAt.getTime() : Infinity);
    this.write(mark, this.actors, keyHash, actor, until);
  }

  getAccess(channelId: string, userId: string): ChannelAccess | undefined {
    return this.read(this.access, `${channelId}:${userId}`);
  }

  setAccess(mark: number, channelId: string, userId: string, value: ChannelAccess): void {
    this.write(mark, this.access, `${channelId}:${userId}`, value, this.now() + TTL_MS);
  }

  /** An incoming webhook by its posting id (the hot path of webhook posts). */
  getHook<T extends object>(id: string): T | undefined {
    return this.read(this.hooks, id) as T | undefined;
  }

  setHook(mark: number, id: string, hook: object): void {
    this.write(mark, this.hooks, id, hook, this.now() + TTL_MS);
  }

  dropHook(id: string): void {
    this.hooks.delete(id);
  }

  /** Drops what an event makes stale. Called for local commits and for every event read from the stream. */
  onEvent(event: Pick<AxidEvent, 'type' | 'data'>): void {
    const data = event.data as Record<string, unknown>;
    if (ACCESS_EVENT_TYPES.has(event.type)) this.generation++;
    switch (event.type) {
      case 'api_key.revoked':
        this.dropActors((a) => a.keyId === data.key_id);
        break;
      case 'member.removed':
        this.dropActors((a) => a.userId === data.user_id);
        this.dropAccess((key) => key.endsWith(`:${String(data.user_id)}`));
        // their incoming webhooks stop with them
        for (const [id, entry] of this.hooks) if ((entry.value as { created_by?: unknown }).created_by === data.user_id) this.hooks.delete(id);
        break;
      case 'member.updated':
        this.dropActors((a) => a.userId === (data.user as { id?: string } | undefined)?.id);
        break;
      case 'channel.member_added':
      case 'channel.member_removed':
        this.access.delete(`${String(data.channel_id)}:${String(data.user_id)}`);
        break;
      case 'webhook.deleted':
        this.hooks.delete(String(data.webhook_id));
        break;
      case 'channel.updated': {
        const id = (data.channel as { id?: string } | undefined)?.id;
        this.dropAccess((key) => key.startsWith(`${id}:`));
        // its hooks too: whether their channel is archived is cached with them
        for (const [hookId, entry] of this.hooks) if ((entry.value as { channel_id?: unknown }).channel_id === id) this.hooks.delete(hookId);
        break;
      }
      default:
    }
  }

  clear(): void {
    this.actors.clear();
    this.access.clear();
    this.hooks.clear();
  }

  private read<T>(map: Map<string, Entry<T>>, key: string): T | undefined {
    if (!this.enabled || !this.fresh()) return undefined;
    const entry = map.get(key);
    if (!entry) return undefined;
    if (entry.until <= this.now()) {
      map.delete(key);
      return undefined;
    }
    return entry.value;
  }

  private write<T>(mark: number, map: Map<string, Entry<T>>, key: string, value: T, until: number): void {
    if (!this.enabled || mark !== this.generation) return;
    if (map.size >= MAX_ENTRIES) map.clear(); // crude bound: a refill costs one query per key
    map.set(key, { value, until });
  }

  private dropActors(match: (a: Actor) => boolean): void {
    for (const [key, entry] of this.actors) if (match(entry.value)) this.actors.delete(key);
  }

  private dropAccess(match: (key: string) => boolean): void {
    for (const key of this.access.keys()) if (match(key)) this.access.delete(key);
  }
}
