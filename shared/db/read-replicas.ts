// Read replicas (DATABASE_READ_URL): the one place that decides whether a read
// goes to a streaming replica or to the primary. Stores take a Db; services
// pass the one `rt.reads.read(actor, (db) => ...)` gives them for the reads a
// replica may answer (history pages, single reads, lists, search, the stream's
// init snapshot). Writes, and reads that decide a write, use rt.db (the primary).
//
// Read-your-writes, per API key: after a request that may have written
// (shared/http/route.ts: any non-GET by a key), the primary's WAL insert
// position is stored in Redis under the key's id (only ever raised, kept a
// while past DATABASE_READ_MAX_LAG_MS). A read by that key goes to a replica
// only once the replica's replay position has passed it; every API process
// sees the same position, so the next request may land anywhere.
//
// A replica is watched every POLL_MS: its replay position, and its lag (how
// long ago the primary first wrote something the replica has not replayed,
// from samples of the primary's position). A replica that does not answer,
// or lags past DATABASE_READ_MAX_LAG_MS, is skipped; a read that fails on a
// replica is run again on the primary, so a replica's loss costs latency,
// never an error. /readyz asks only the primary (services/stack.ts).
import type { Knex } from 'knex';
import { AppError, isDependencyUnavailable } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { answering, type Redis } from '../redis.js';
import { createDb, type DbBounds } from './knex.js';

/** Whose writes a read must see: an authenticated caller, or nobody (null). */
export interface ReadFor {
  keyId: string;
}

export interface ReadRoutingOptions {
  primary: Knex;
  replicaUrls: string[];
  maxLagMs: number;
  redis: Redis;
  /** Redis key prefix (REDIS_KEY_PREFIX). */
  prefix: string;
  metrics: Metrics;
  log: Logger;
  /** The primary's statement bounds (shared/db/knex.ts), for the replicas' pools too. */
  bounds?: DbBounds;
  pollMs?: number;
}

/** An LSN ("16/B374D848") as one number; null stays null. */
export function parseLsn(text: string | null | undefined): bigint | null {
  if (!text) return null;
  const [hi, lo] = text.split('/');
  return (BigInt(`0x${hi}`) << 32n) | BigInt(`0x${lo}`);
}

// Positions are kept in Redis as 16 hex digits, so that comparing the strings
// compares the positions (the script below only ever raises a key's position).
const lsnKeyText = (lsn: bigint) => lsn.toString(16).padStart(16, '0');
const RAISE_POSITION = `local cur = redis.call('GET', KEYS[1])
if (not cur) or cur < ARGV[1] then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) else redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1`;

const POLL_MS = 250;
/** A replica, or Redis, that does not answer within this is treated as away for this read or poll. */
const ANSWER_MS = 1_000;

function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)));
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

interface Replica {
  name: string;
  db: Knex;
  up: boolean;
  /** Replay position at the last poll. */
  replayed: bigint;
  lagMs: number;
}

export class ReadRouting {
  private readonly replicas: Replica[];
  /** (time, primary WAL position) samples of the last maxLag + a few seconds. */
  private samples: { at: number; lsn: bigint }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | null = null;
  private next = 0;
  /** Set when a position could not be stored: this process reads from the primary until then. */
  private primaryOnlyUntil = 0;
  private readonly ttlMs: number;
  private readonly pollMs: number;

  constructor(private readonly o: ReadRoutingOptions) {
    this.pollMs = o.pollMs ?? POLL_MS;
    this.ttlMs = Math.max(2 * o.maxLagMs, 10_000);
    this.replicas = o.replicaUrls.map((url, i) => ({
      name: String(i),
      // A small pool and short waits: a replica away must fail fast, the read then goes to the primary.
      db: createDb(url, 10, o.log, o.bounds, { connectTimeoutMs: ANSWER_MS, acquireTimeoutMs: ANSWER_MS }),
      up: false,
      replayed: 0n,
      lagMs: Number.POSITIVE_INFINITY,
    }));
  }

  /** True when DATABASE_READ_URL names at least one replica. */
  get enabled() {
    return this.replicas.length > 0;
  }

  start() {
    if (!this.enabled || this.timer) return;
    const tick = () => {
      this.polling = this.poll().finally(() => (this.polling = null));
    };
    tick();
    this.timer = setInterval(() => {
      if (!this.polling) tick();
    }, this.pollMs);
    this.timer.unref();
  }

  async stop() {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.polling;
    await Promise.all(this.replicas.map((r) => r.db.destroy()));
  }

  /** Resolves after the next poll: tests wait on it instead of sleeping. */
  async polled(): Promise<void> {
    await this.polling;
    await this.poll();
  }

  /** For /metrics and tests: each replica's state. */
  state() {
    return this.replicas.map((r) => ({ name: r.name, up: r.up, lagMs: r.lagMs, replayed: r.replayed }));
  }

  /**
   * Runs `read` on a replica that has every write `who` made, or on the
   * primary. On a replica, a failure (the replica went away) or a 404 (the row
   * may not have arrived yet) is asked again on the primary.
   */
  async read<T>(who: ReadFor | null, read: (db: Knex) => Promise<T>): Promise<T> {
    const replica = await this.choose(who);
    if (!replica) return read(this.o.primary);
    try {
      const result = await read(replica.db);
      this.count('replica', 'ok');
      return result;
    } catch (err) {
      if (err instanceof AppError && err.status !== 404) throw err;
      if (!(err instanceof AppError) && isDependencyUnavailable(err)) {
        replica.up = false;
        this.o.metrics.replicaUp.set({ replica: replica.name }, 0);
      }
      this.count('primary', err instanceof AppError ? 'not_on_replica' : 'replica_failed');
      return read(this.o.primary);
    }
  }

  /**
   * After a write whose outcome is unknown because the primary did not answer
   * (shared/http/route.ts): this process reads from the primary for a while,
   * without asking the primary where it is.
   */
  lostTrack(): void {
    if (this.enabled) this.primaryOnlyUntil = Date.now() + this.ttlMs;
  }

  /**
   * After a request by `who` that may have written (shared/http/route.ts):
   * remember the primary's WAL position for the key, in Redis for every API process.
   */
  async wrote(who: ReadFor | null): Promise<void> {
    if (!this.enabled || !who) return;
    try {
      const { rows } = await this.o.primary.raw<{ rows: { lsn: string }[] }>('SELECT pg_current_wal_insert_lsn()::text AS lsn');
      const lsn = parseLsn(rows[0]!.lsn)!;
      if (!answering(this.o.redis)) throw new Error('redis does not answer');
      await within(ANSWER_MS, this.o.redis.eval(RAISE_POSITION, 1, this.positionKey(who), lsnKeyText(lsn), String(this.ttlMs)));
    } catch (err) {
      // Without the position no replica may answer this key: this process reads
      // from the primary for a while; others do too once Redis fails them.
      this.primaryOnlyUntil = Date.now() + this.ttlMs;
      this.o.log.warn({ err: (err as Error).message }, 'read replicas: could not store a write position; reading from the primary');
    }
  }

  private positionKey(who: ReadFor) {
    return `${this.o.prefix}read-position:${who.keyId}`;
  }

  private count(target: 'primary' | 'replica', reason: string) {
    this.o.metrics.dbReads.inc({ target, reason });
  }

  private async choose(who: ReadFor | null): Promise<Replica | null> {
    if (!this.enabled) return null;
    const usable = this.replicas.filter((r) => r.up && r.lagMs <= this.o.maxLagMs);
    if (usable.length === 0) {
      this.count('primary', this.replicas.some((r) => r.up) ? 'lagging' : 'replica_down');
      return null;
    }
    if (Date.now() < this.primaryOnlyUntil) {
      this.count('primary', 'position_unknown');
      return null;
    }
    let needs = 0n;
    if (who) {
      try {
        if (!answering(this.o.redis)) throw new Error('redis does not answer');
        const stored = await within(ANSWER_MS, this.o.redis.get(this.positionKey(who)));
        if (stored) needs = BigInt(`0x${stored}`);
      } catch {
        this.count('primary', 'position_unknown');
        return null;
      }
    }
    const ready = needs === 0n ? usable : usable.filter((r) => r.replayed >= needs);
    if (ready.length === 0) {
      this.count('primary', 'own_write');
      return null;
    }
    this.next = (this.next + 1) % ready.length;
    return ready[this.next]!;
  }

  private async poll(): Promise<void> {
    const now = Date.now();
    try {
      const { rows } = await within(ANSWER_MS, this.o.primary.raw<{ rows: { lsn: string }[] }>('SELECT pg_current_wal_insert_lsn()::text AS lsn'));
      this.samples.push({ at: now, lsn: parseLsn(rows[0]!.lsn)! });
    } catch {
      // The primary away: nothing to compare against; replicas keep their last state.
      return;
    }
    const keepFrom = now - this.o.maxLagMs - 5_000;
    while (this.samples.length > 1 && this.samples[0]!.at < keepFrom) this.samples.shift();
    await Promise.all(this.replicas.map((r) => this.pollReplica(r, now)));
  }

  private async pollReplica(r: Replica, now: number) {
    try {
      const res = await within(ANSWER_MS, r.db.raw('SELECT pg_last_wal_replay_lsn()::text AS lsn'));
      const rows = (res as { rows: { lsn: string | null }[] }).rows;
      const replayed = parseLsn(rows[0]?.lsn);
      // Not in recovery (promoted, or not a replica at all): not a replica of this primary.
      if (replayed === null) throw new Error('not a streaming replica (pg_last_wal_replay_lsn() is null)');
      r.replayed = replayed;
      // Lag: since the primary first held WAL the replica has not replayed.
      const behind = this.samples.find((s) => s.lsn > replayed);
      r.lagMs = behind ? now - behind.at : 0;
      if (!r.up) this.o.log.info({ replica: r.name }, 'read replica answers: reads may go to it');
      r.up = true;
    } catch (err) {
      if (r.up) this.o.log.warn({ replica: r.name, err: (err as Error).message }, 'read replica away: its reads go to the primary');
      r.up = false;
    }
    this.o.metrics.replicaUp.set({ replica: r.name }, r.up ? 1 : 0);
    if (r.up) this.o.metrics.replicaLag.set({ replica: r.name }, r.lagMs / 1000);
  }
}
