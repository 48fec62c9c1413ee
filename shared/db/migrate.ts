import type { Knex } from 'knex';
import { migrations } from './migrations/index.js';

// A fixed key for pg_advisory_lock: replicas starting together queue here and
// the first one migrates; the others then find nothing left to do.
const MIGRATION_LOCK_KEY = 0x41584944; // "AXID"

/** The migrations of migrations/index.ts, in order, as knex reads them. */
export const migrationSource: Knex.MigrationSource<string> = {
  getMigrations: async () => Object.keys(migrations),
  getMigrationName: (name) => name,
  getMigration: async (name) => migrations[name]!,
};

export interface MigrateOptions {
  /** false for the single-connection embedded database: nobody to race, and no spare connection. */
  lock: boolean;
  /** Runs under the same lock after migrating (first-start bootstrap). */
  then?: (db: Knex) => Promise<void>;
}

export async function migrateLatest(db: Knex, opts: MigrateOptions = { lock: true }): Promise<string[]> {
  if (!opts.lock) {
    const applied = await runLatest(db);
    await opts.then?.(db);
    return applied;
  }
  // The advisory lock lives on one session: hold one pooled connection for it.
  const conn = await db.client.acquireConnection();
  try {
    await conn.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      const applied = await runLatest(db);
      await opts.then?.(db);
      return applied;
    } finally {
      await conn.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    await db.client.releaseConnection(conn);
  }
}

async function runLatest(db: Knex): Promise<string[]> {
  const [, applied] = (await db.migrate.latest({ migrationSource })) as [number, string[]];
  return applied;
}
