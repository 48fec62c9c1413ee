import knexFactory, { type Knex } from 'knex';
import pg from 'pg';

export type { Knex };
/** A knex instance or an open transaction: every store function takes one. */
export type Db = Knex | Knex.Transaction;

// int8 (bigint) columns come back as strings by default; our bigints are
// sequence numbers and counters far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number.parseInt(v, 10));

/** Where knex's own warnings go (a lost connection, a failed acquire): the service log, not the console. */
export interface DbLog {
  warn(obj: object, msg: string): void;
}

/**
 * Bounds on every query of a pool (a hung or paused PostgreSQL must not hold a
 * request; docs/reliability.md, "A hung dependency"). Left out for migrations,
 * whose DDL and migration lock may rightly take long.
 */
export interface DbBounds {
  /** Server side: statement_timeout (and lock_timeout, idle_in_transaction_session_timeout from it). */
  statementTimeoutMs: number;
}

/** The client-side bound: the server's own timeout answers first while the server runs. */
export const clientTimeoutMs = (b: DbBounds) => b.statementTimeoutMs + 1_000;

/** Shorter waits for a server whose absence has a fallback (a read replica: shared/db/read-replicas.ts). */
export interface DbTimeouts {
  connectTimeoutMs?: number;
  acquireTimeoutMs?: number;
}

export function createDb(databaseUrl: string, poolMax = 10, log?: DbLog, bounds?: DbBounds, timeouts: DbTimeouts = {}): Knex {
  const warn = (message: unknown) => log?.warn({ err: String((message as Error)?.message ?? message) }, 'database');
  return knexFactory({
    client: 'pg',
    connection: {
      connectionString: databaseUrl,
      application_name: 'axid',
      // No JIT: Axid's statements are short index reads, and PostgreSQL compiles a prepared statement
      // again on every execution whose estimate passes jit_above_cost. The relay's read, estimated high
      // on a table without fresh statistics, spent 45 ms compiling for 0.5 ms of work (docs/bench.md).
      options: '-c jit=off',
      ...(bounds
        ? {
            statement_timeout: bounds.statementTimeoutMs,
            // A transaction waits for a row lock at most this long, then rolls back.
            lock_timeout: Math.max(1, Math.floor(bounds.statementTimeoutMs / 2)),
            idle_in_transaction_session_timeout: bounds.statementTimeoutMs * 2,
            query_timeout: clientTimeoutMs(bounds),
            connectionTimeoutMillis: clientTimeoutMs(bounds),
          }
        : {}),
      ...(timeouts.connectTimeoutMs ? { connectionTimeoutMillis: timeouts.connectTimeoutMs } : {}),
    },
    pool: { min: 0, max: poolMax, ...(bounds ? { afterCreate: abandonOnTimeout } : {}) },
    acquireConnectionTimeout: timeouts.acquireTimeoutMs ?? (bounds ? clientTimeoutMs(bounds) : 10_000),
    ...(log ? { log: { warn, error: warn, deprecate: warn, debug: () => undefined } } : {}),
  });
}

/**
 * When a write recording events must commit by (outbox.commit_by, migration
 * 010): before its client can give up on the statement that commits it, with
 * room for clocks a little apart. Null on an unbounded pool. The bound is read
 * from the pool's settings, which a transaction shares.
 */
export function commitDeadline(db: Db): string | null {
  const timeout = (db.client.config.connection as { query_timeout?: number } | undefined)?.query_timeout;
  return timeout ? new Date(Date.now() + timeout - COMMIT_MARGIN_MS).toISOString() : null;
}

/** Clocks of the API and the database may differ by this much before a late commit could slip through. */
const COMMIT_MARGIN_MS = 500;

/** node-postgres's message when query_timeout fires (it has no code). */
export const QUERY_TIMEOUT_MESSAGE = 'Query read timeout';

/**
 * A query that timed out on the client side closes its connection: the
 * server (paused, or stuck) may still run what was sent, but once it reads the
 * closed socket it rolls the open transaction back, so a request that answered
 * 503 does not commit later. (node-postgres alone only stops waiting: the
 * connection went back to the pool with its transaction still open, and the
 * next request's statements ran inside it.) A statement or COMMIT already
 * sent is refused by the database past its deadline instead (commitDeadline).
 */
function abandonOnTimeout(conn: pg.Client, done: (err: Error | null, conn: pg.Client) => void) {
  // Looked up at each call, not bound once: the prototype's method is the one to wrap (tests count queries there).
  const query = (...args: unknown[]) => (Object.getPrototypeOf(conn).query as (...a: unknown[]) => unknown).apply(conn, args);
  const abandon = (err: unknown) => {
    if ((err as Error | undefined)?.message !== QUERY_TIMEOUT_MESSAGE) return;
    // Marks it disposed for knex (its 'end' listener) and fails what is queued on it.
    (conn as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
  };
  (conn as unknown as { query: unknown }).query = (...args: unknown[]) => {
    const last = args.at(-1);
    if (typeof last === 'function') {
      args[args.length - 1] = (err: unknown, res: unknown) => {
        abandon(err);
        (last as (err: unknown, res: unknown) => void)(err, res);
      };
      return query(...args);
    }
    const result = query(...args);
    if (result instanceof Promise) result.catch(abandon);
    return result;
  };
  done(null, conn);
}

/** Creates the database named in the URL if it does not exist yet. */
export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!name) return;
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) {
      await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`).catch((err: { code?: string }) => {
        // 42P04: another replica created it first.
        if (err.code !== '42P04' && err.code !== '23505') throw err;
      });
    }
  } finally {
    await client.end();
  }
}

export interface PreparedStatement {
  /** Unique per statement text: Postgres keeps it prepared per connection under this name. */
  name: string;
  text: string;
}

/**
 * Runs a named prepared statement on a connection of knex's pool, or inside
 * an open transaction on its connection (knex's transaction client hands out
 * that one): Postgres parses and plans it once per connection and each call
 * sends only values. For the hottest queries only (knex has no named statements).
 */
export async function runPrepared<R extends pg.QueryResultRow>(db: Db, statement: PreparedStatement, values: unknown[]): Promise<pg.QueryResult<R>> {
  const conn = (await db.client.acquireConnection()) as pg.Client;
  try {
    return await conn.query<R>({ ...statement, values });
  } finally {
    await db.client.releaseConnection(conn);
  }
}
