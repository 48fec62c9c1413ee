// The newest history page of busy conversations, kept in Redis for every API
// process (docs/architecture.md, "The newest page"). A channel switch asks
// for the newest page of a conversation (or a thread) far more often than
// anybody writes to it; rendering it in PostgreSQL cost about 680 µs a page.
//
// One Redis hash per conversation holds a token (`v`, random, made by the
// first reader) and the pages read under it (`level:thread:limit`). Any
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
import type { JsonPage } from '../../../shared/http/envelope.js';
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
  axidPageRead(key: string, token: string, field: string, ttlMs: number): Promise<[string, string | null]>;
  axidPageFill(key: string, token: string, field: string, page: string): Promise<number>;
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

// The page as one string: "lastSeq hasMore\n" then the page's JSON text, which is kept as it came.
const encode = (p: JsonPage) => `${p.lastSeq ?? ''} ${p.hasMore ? 1 : 0}\n${p.data}`;
function decode(text: string): JsonPage {
  const nl = text.indexOf('\n');
  const [last, more] = text.slice(0, nl).split(' ');
  return { data: text.slice(nl + 1), lastSeq: last === '' ? null : Number(last), hasMore: more === '1' };
}

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

  /** The kept page, or a miss with the token to store it under. */
  async get(k: PageKey): Promise<JsonPage | PageMiss> {
    if (!this.enabled || !answering(this.redis)) return { token: null };
    try {
      const [token, page] = await this.redis.axidPageRead(this.keyOf(k.channelId), this.freshToken(), this.fieldOf(k), this.o.ttlSeconds * 1000);
      this.o.metrics.pageCache.inc({ result: page === null ? 'miss' : 'hit' });
      return page === null ? { token } : decode(page);
    } catch (err) {
      this.o.metrics.pageCache.inc({ result: 'error' });
      this.o.log.debug({ err: (err as Error).message }, 'page cache: read failed; reading the database');
      return { token: null };
    }
  }

  /** Keeps a page read from the primary under the token seen before the read (nothing if it changed since). */
  async fill(k: PageKey, miss: PageMiss, page: JsonPage): Promise<void> {
    if (miss.token === null || page.data.length > MAX_PAGE_BYTES || !answering(this.redis)) return;
    await this.redis.axidPageFill(this.keyOf(k.channelId), miss.token, this.fieldOf(k), encode(page)).catch(() => undefined);
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
