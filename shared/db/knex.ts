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

export function createDb(databaseUrl: string, poolMax = 10, log?: DbLog): Knex {
  const warn = (message: unknown) => log?.warn({ err: String((message as Error)?.message ?? message) }, 'database');
  return knexFactory({
    client: 'pg',
    connection: { connectionString: databaseUrl, application_name: 'axid' },
    pool: { min: 0, max: poolMax },
    acquireConnectionTimeout: 10_000,
    ...(log ? { log: { warn, error: warn, deprecate: warn, debug: () => undefined } } : {}),
  });
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
 * Runs a named prepared statement on a connection of knex's pool: Postgres
 * parses and plans it once per connection and each call sends only values.
 * For the hottest queries only (knex has no named statements).
 */
export async function runPrepared<R extends pg.QueryResultRow>(db: Knex, statement: PreparedStatement, values: unknown[]): Promise<pg.QueryResult<R>> {
  const conn = (await db.client.acquireConnection()) as pg.Client;
  try {
    return await conn.query<R>({ ...statement, values });
  } finally {
    await db.client.releaseConnection(conn);
  }
}
