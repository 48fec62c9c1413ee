// The newest history page of busy conversations, kept in Redis for every API
// process (docs/architecture.md, "The newest page"). A channel switch asks
// for the newest page of a conversation (or a thread) far more often than
// anybody writes to it; rendering it in PostgreSQL cost about 680 µs a page.
//
// One Redis hash per conversation holds a token (`v`, random, made by the
// first reader) and the pages read under it (`level:thread:limit`), each as
// the answer's whole JSON text, gzipped once when it is long enough to be
// compressed at all: a kept page goes to a client that takes gzip as it is
// kept, instead of being compressed again for every read (docs/bench.md,
// "The kept page compressed once"). Any
// committed change to the conversation deletes the hash (services/stack.ts
// calls `invalidate` from the runtime's commit listeners: every message,
// reaction, thread and pin change carries a channel-scope event), before the
// writing request answers (shared/http/route.ts waits for the listeners), so
// a writer's next read never finds a page older than their write.
//
// A page read from the database is stored only under the token the reader
// saw before it read, and only while that token is still the hash's: a
// change committed between the two deleted the hash, so a page that may miss
// it is never kept. Only pages read on the primary are kept: a replica may
// not have replayed a change whose invalidation is already done.
//
// The hash lives PAGE_CACHE_SECONDS from its first read at most (a change
// missed by every listener, a write by hand, is gone by then). Redis away or
// slow: the page is read from the database, as without the cache.
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { COMPRESSION_THRESHOLD } from '../../../shared/http/compression.js';
import { JsonText } from '../../../shared/http/envelope.js';
import type { Logger } from '../../../shared/logger.js';
import type { Metrics } from '../../../shared/metrics.js';
import { answering, type Redis } from '../../../shared/redis.js';

// KEYS[1]: the conversation's hash. ARGV: a fresh token, the page's field, the hash's lifetime (ms).
const READ = `local v = redis.call('HGET', KEYS[1], 'v')
if not v then
  v = ARGV[1]
  redis.call('HSET', KEYS[1], 'v', v)
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return {v, false}
end
return {v, redis.call('HGET', KEYS[1], ARGV[2])}`;
// ARGV: the token the reader saw, the page's field, the page.
const FILL = `if redis.call('HGET', KEYS[1], 'v') == ARGV[1] then redis.call('HSET', KEYS[1], ARGV[2], ARGV[3]) return 1 end
return 0`;

/** A page larger than this is not kept (a page of long messages; memory stays bounded per conversation). */
const MAX_PAGE_BYTES = 256 * 1024;
/** Invalidations that failed are tried again this often until Redis takes them (the hash's lifetime bounds them too). */
const RETRY_MS = 1_000;

// The runtime carries it (services/stack.ts); shared/runtime.ts cannot name core's types, so core adds the field.
declare module '../../../shared/runtime.js' {
  interface Runtime {
    /** The newest history pages kept in Redis (this file). */
    pages: PageCache;
  }
}

type Scripted = Redis & {
  // The Buffer variant ioredis defines beside each script: a kept answer may be gzip.
  axidPageReadBuffer(key: string, token: string, field: string, ttlMs: number): Promise<[Buffer, Buffer | null]>;
  axidPageFill(key: string, token: string, field: string, answer: string | Buffer): Promise<number>;
};

/** Which newest page: of a conversation's top level, or of one thread. */
export interface PageKey {
  channelId: string;
  threadId: string | null;
  limit: number;
}

/** A miss: the token to store the page under once read (null: do not store). */
export interface PageMiss {
  token: string | null;
}

/** Whether a kept answer is gzip (its magic bytes; JSON text begins with `{`). */
const isGzip = (kept: Buffer) => kept[0] === 0x1f && kept[1] === 0x8b;

export class PageCache {
  private readonly redis: Scripted;
  private readonly failed = new Set<string>();
  private retryTimer: NodeJS.Timeout | null = null;

  constructor(
    redis: Redis,
    /** `level`: the runtime's feature level, set once where the runtime is built (pages of two levels never share a field). */
    private readonly o: { prefix: string; ttlSeconds: number; level: number; log: Logger; metrics: Pick<Metrics, 'pageCache'> },
  ) {
    this.redis = redis as Scripted;
    if (!('axidPageRead' in redis)) {
      redis.defineCommand('axidPageRead', { numberOfKeys: 1, lua: READ });
      redis.defineCommand('axidPageFill', { numberOfKeys: 1, lua: FILL });
    }
    // Back from away: the deletes it missed go first, before other processes read what they left.
    redis.on('ready', this.retryFailed);
  }

  /** A token no other reader makes: this process's random prefix and a counter (random bytes per read cost 1 % of a hit). */
  private readonly tokenPrefix = randomBytes(9).toString('base64');
  private tokens = 0;
  private freshToken() {
    return `${this.tokenPrefix}${(this.tokens++).toString(36)}`;
  }

  get enabled() {
    return this.o.ttlSeconds > 0;
  }

  private keyOf(channelId: string) {
    return `${this.o.prefix}pages:${channelId}`;
  }

  private fieldOf(k: PageKey) {
    return `${this.o.level}:${k.threadId ?? ''}:${k.limit}`;
  }

  /** The kept answer, or a miss with the token to store it under. */
  async get(k: PageKey): Promise<JsonText | PageMiss> {
    if (!this.enabled || !answering(this.redis)) return { token: null };
    try {
      const [token, kept] = await this.redis.axidPageReadBuffer(this.keyOf(k.channelId), this.freshToken(), this.fieldOf(k), this.o.ttlSeconds * 1000);
      this.o.metrics.pageCache.inc({ result: kept === null ? 'miss' : 'hit' });
      if (kept === null) return { token: token.toString() };
      return isGzip(kept) ? JsonText.gzipped(kept) : new JsonText(kept.toString());
    } catch (err) {
      this.o.metrics.pageCache.inc({ result: 'error' });
      this.o.log.debug({ err: (err as Error).message }, 'page cache: read failed; reading the database');
      return { token: null };
    }
  }

  /**
   * Keeps the answer of a page read from the primary under the token seen
   * before the read (nothing if it changed since), and returns the answer to
   * send: gzipped once here when kept so (its reader sends it so too).
   */
  async fill(k: PageKey, miss: PageMiss, answer: JsonText): Promise<JsonText> {
    const { text } = answer;
    if (miss.token === null || text.length > MAX_PAGE_BYTES || !answering(this.redis)) return answer;
    const kept = text.length >= COMPRESSION_THRESHOLD ? new JsonText(text, gzipSync(text)) : answer;
    await this.redis.axidPageFill(this.keyOf(k.channelId), miss.token, this.fieldOf(k), kept.gzipped ?? text).catch(() => undefined);
    return kept;
  }

  /**
   * Drops every kept page of these conversations: called right after a
   * commit that changed them; the writing request waits for it (services/stack.ts).
   * Never rejects: what Redis does not take now is tried again.
   */
  async invalidate(channelIds: Iterable<string>): Promise<void> {
    if (!this.enabled) return;
    await Promise.all(
      [...new Set(channelIds)].map((id) =>
        answering(this.redis)
          ? this.redis.del(this.keyOf(id)).then(
              () => undefined,
              () => this.failedOn(id),
            )
          : this.failedOn(id),
      ),
    );
  }

  private failedOn(id: string) {
    this.failed.add(id);
    this.retryTimer ??= setTimeout(this.retryFailed, RETRY_MS);
    this.retryTimer.unref();
  }

  private readonly retryFailed = () => {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    if (this.failed.size === 0) return;
    const ids = [...this.failed];
    this.failed.clear();
    void this.invalidate(ids);
  };

  stop() {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.redis.off('ready', this.retryFailed);
  }
}
