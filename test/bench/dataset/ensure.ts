// Builds the big workspace into a database of its own once and keeps it: the
// bench finds it there on the next run (BENCH_10M_REBUILD=1 builds it again).
// New migrations are applied to a kept database before it is used.
import pg from 'pg';
import { createDb, ensureDatabase } from '../../../shared/db/knex.js';
import { migrateLatest } from '../../../shared/db/migrate.js';
import { buildBigWorkspace, type DatasetSize } from './big-workspace.js';

export interface DatasetState {
  /** Seconds the kept build took when it was made. */
  buildSeconds: number;
  builtAt: string;
  /** True when this call built it. */
  builtNow: boolean;
  steps: { step: string; seconds: number }[];
}

async function recorded(client: pg.Client, size: string): Promise<DatasetState | undefined> {
  const { rows } = await client.query<{ seconds: number; built_at: Date; steps: DatasetState['steps'] }>(
    `SELECT seconds, built_at, steps FROM bench_dataset WHERE size = $1`,
    [size],
  ).catch(() => ({ rows: [] }));
  const row = rows[0];
  return row && { buildSeconds: row.seconds, builtAt: row.built_at.toISOString(), builtNow: false, steps: row.steps };
}

export async function ensureBigWorkspace(
  databaseUrl: string,
  size: DatasetSize,
  o: { rebuild?: boolean; log?: (msg: string) => void } = {},
): Promise<DatasetState> {
  const log = o.log ?? (() => undefined);
  const admin = new URL(databaseUrl);
  const name = decodeURIComponent(admin.pathname.slice(1));
  if (o.rebuild) {
    admin.pathname = '/postgres';
    const c = new pg.Client({ connectionString: admin.toString() });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`).finally(() => c.end());
  }
  await ensureDatabase(databaseUrl);
  const knex = createDb(databaseUrl, 2);
  try {
    const applied = await migrateLatest(knex);
    if (applied.length) {
      log(`migrations applied to ${name}: ${applied.join(', ')}`);
      // A migration may add a column or table the planner knows nothing of
      // yet (the search words): statistics as autovacuum would gather them on a
      // server that runs it (this machine's does not).
      await knex.raw('ANALYZE messages, message_search');
    }
  } finally {
    await knex.destroy();
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const kept = await recorded(client, size.name);
    if (kept) return kept;
    const { rows } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM workspaces`);
    if (Number(rows[0]!.n) > 0) throw new Error(`${name} holds data but no finished ${size.name} build: run with BENCH_10M_REBUILD=1`);
    log(`building the ${size.name} data set (${size.messages} messages) in ${name}`);
    const report = await buildBigWorkspace(client, size, log);
    return { buildSeconds: report.seconds, builtAt: new Date().toISOString(), builtNow: true, steps: report.steps };
  } finally {
    await client.end();
  }
}

// `tsx test/bench/dataset/ensure.ts [full|small] [database]`: builds ahead of a bench run.
if (import.meta.url === `file://${process.argv[1]}`) {
  const { DATASET_SIZES } = await import('./big-workspace.js');
  const sizeName = (process.argv[2] ?? 'full') as keyof typeof DATASET_SIZES;
  const database = process.argv[3] ?? 'axid_bench_10m';
  const state = await ensureBigWorkspace(`postgres://postgres@127.0.0.1:5432/${database}`, DATASET_SIZES[sizeName], {
    rebuild: process.env.BENCH_10M_REBUILD === '1',
    log: (m) => process.stderr.write(`[dataset ${new Date().toISOString()}] ${m}\n`),
  });
  process.stdout.write(`${JSON.stringify(state)}\n`);
}
