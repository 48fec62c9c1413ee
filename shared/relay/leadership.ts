// Who relays: one process per database at a time. The elected one holds a
// session advisory lock on a connection of its own; the lock lives as long as
// that connection, so a relay that dies or loses it lets another process take
// over at its next campaign. The relay's queries run on that connection too,
// so relaying never waits for (or delays) request handling in the pool.
import pg from 'pg';
import type { Knex } from 'knex';

const RELAY_LOCK_KEY = 0x41584945;
/** A campaign against a database that does not answer gives up after this long (and retries at the next poll). */
const CONNECT_TIMEOUT_MS = 5000;

export interface Leadership {
  /** Whether this process holds the lock now. */
  readonly held: boolean;
  /** Tries to take the lock when not held; resolves to whether it is held. */
  campaign(): Promise<boolean>;
  /**
   * A query on the leader's connection (`$1`-style parameters). With `name`
   * it is a prepared statement: Postgres parses and plans it once per
   * connection (the relay's read is planned in about as long as it runs).
   */
  query<R>(sql: string, params: unknown[], name?: string): Promise<R[]>;
  /** Gives the lock up for good (closes the connection); campaigns after it elect nothing. */
  close(): Promise<void>;
}

/** Elected by pg_try_advisory_lock on a dedicated connection. */
/** The relay connection's random_page_cost (see campaign). */
export const RELAY_RANDOM_PAGE_COST = 1.1;

export class AdvisoryLockLeadership implements Leadership {
  private client: pg.Client | null = null;
  private closed = false;
  held = false;

  constructor(private readonly databaseUrl: string) {}

  async campaign(): Promise<boolean> {
    if (this.held || this.closed) return this.held;
    try {
      if (!this.client) {
        // No JIT, as the pools (shared/db/knex.ts): it compiled this read again on every execution.
        const client = new pg.Client({ connectionString: this.databaseUrl, application_name: 'axid-relay', connectionTimeoutMillis: CONNECT_TIMEOUT_MS, options: '-c jit=off' });
        // A lost connection is a lost lock: another process may be elected now.
        client.on('error', () => void this.lose());
        this.client = client;
        await client.connect();
        // The relay's read is prepared once, often while messages is small and has no statistics, and kept:
        // with the default random_page_cost the plan it keeps can be a scan of the whole table once it has
        // grown (a few more columns on messages tipped it). Index reads cost what storage of today makes
        // them cost (SSD), so the kept plan stays an index range (test/api/relay-read-plan.test.ts).
        await client.query(`SET random_page_cost = ${RELAY_RANDOM_PAGE_COST}`);
      }
      const { rows } = await this.client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [RELAY_LOCK_KEY]);
      // Closed meanwhile: the connection is ending, and the lock with it.
      this.held = rows[0]?.locked === true && !this.closed;
    } catch (err) {
      await this.lose();
      throw err;
    }
    return this.held;
  }

  async query<R>(sql: string, params: unknown[], name?: string): Promise<R[]> {
    if (!this.held || !this.client) throw new Error('not the elected relay');
    return (await this.client.query(name ? { name, text: sql, values: params } : { text: sql, values: params })).rows as R[];
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.lose();
  }

  private async lose(): Promise<void> {
    this.held = false;
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }
}

/**
 * The embedded database (PGlite) takes one connection and one process: that
 * process is always the relay, and its queries go through the knex pool.
 */
export class SoleLeadership implements Leadership {
  held = true;

  constructor(private readonly db: Knex) {}

  async campaign(): Promise<boolean> {
    return this.held;
  }

  async query<R>(sql: string, params: unknown[]): Promise<R[]> {
    // knex binds `?` by position: each `$n` becomes a `?` with its own copy of
    // parameter n (a statement may use `$1` twice, as the outbox read does).
    const bindings: unknown[] = [];
    const knexSql = sql.replace(/\$(\d+)/g, (_, n: string) => {
      bindings.push(params[Number(n) - 1]);
      return '?';
    });
    const result = (await this.db.raw(knexSql, bindings as never[])) as { rows: R[] };
    return result.rows;
  }

  async close(): Promise<void> {
    this.held = false;
  }
}
