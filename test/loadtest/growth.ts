// `tsx test/loadtest/growth.ts`: what 1,000,000 posts leave behind in the outbox
// and messages tables (docs/scaling.md, "Growth"). On a PostgreSQL server of
// its own (spare port, removed after: the machine's shared server runs with
// autovacuum off, so it cannot show what autovacuum does), two databases,
// migrated, side by side: one with the outbox's autovacuum
// settings of migration 070 taken out again (PostgreSQL's defaults), one with
// them. Each takes posts as Axid writes them (a message and its outbox row in
// one statement) in batches at a steady rate, while a relay loop reads the
// oldest outbox rows and deletes them (shared/relay/outbox-table.ts does the
// same in one statement). Sizes and pgstattuple are read before, during and
// after; the databases are dropped at the end.
import pg from 'pg';
import { createDb, ensureDatabase } from '../../shared/db/knex.js';
import { migrateLatest } from '../../shared/db/migrate.js';
import { PrivatePostgres } from '../support/private-postgres.js';

const POSTS = Number(process.env.GROWTH_POSTS ?? 1_000_000);
const BATCH = 1_000;
const RATE = Number(process.env.GROWTH_RATE ?? 4_000); // posts per second, both databases together
const SETTLE_S = Number(process.env.GROWTH_SETTLE_SECONDS ?? 70);
const log = (m: string) => process.stderr.write(`[growth ${new Date().toISOString().slice(11, 19)}] ${m}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Sample {
  posts: number;
  outboxBytes: number;
  outboxDead: number;
  messagesBytes: number;
  autovacuums: number;
}

async function measure(db: pg.Client, posts: number): Promise<Sample> {
  const { rows } = await db.query(`
    SELECT pg_total_relation_size('outbox') AS outbox_bytes, pg_total_relation_size('messages') AS messages_bytes,
           (SELECT n_dead_tup FROM pg_stat_user_tables WHERE relname = 'outbox') AS dead,
           (SELECT autovacuum_count FROM pg_stat_user_tables WHERE relname = 'outbox') AS autovacuums`);
  const r = rows[0];
  return { posts, outboxBytes: Number(r.outbox_bytes), outboxDead: Number(r.dead), messagesBytes: Number(r.messages_bytes), autovacuums: Number(r.autovacuums) };
}

async function tuples(db: pg.Client, table: string) {
  const { rows } = await db.query(`SELECT table_len, tuple_count, dead_tuple_count, dead_tuple_percent, free_percent FROM pgstattuple($1)`, [table]);
  return rows[0];
}

async function run(server: PrivatePostgres, name: string, tuned: boolean) {
  const url = server.url(`axid_growth_${name}`);
  await ensureDatabase(url);
  const knex = createDb(url, 2);
  await migrateLatest(knex);
  await knex.destroy();
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  await db.query('CREATE EXTENSION IF NOT EXISTS pgstattuple');
  if (!tuned) await db.query('ALTER TABLE outbox RESET (autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold, autovacuum_vacuum_cost_delay, autovacuum_vacuum_insert_threshold)');
  const { rows: opts } = await db.query(`SELECT reloptions FROM pg_class WHERE relname = 'outbox'`);
  log(`${name}: outbox reloptions ${JSON.stringify(opts[0].reloptions)}`);
  await db.query(`
    INSERT INTO workspaces (id, name) VALUES ('00000000-0000-0000-0000-000000000001', 'growth');
    INSERT INTO users (id, workspace_id, name) VALUES ('00000000-0000-0000-0000-000000000002', '00000000-0000-0000-0000-000000000001', 'poster');
    INSERT INTO channels (id, workspace_id, name) SELECT ('00000000-0000-0000-0001-' || lpad(i::text, 12, '0'))::uuid, '00000000-0000-0000-0000-000000000001', 'c' || i FROM generate_series(1, 100) i;`);
  const samples: Sample[] = [await measure(db, 0)];
  const event = JSON.stringify({ type: 'message.created', to: { scope: 'channel' }, data: { message: { content: 'x'.repeat(300) } } });
  const started = Date.now();
  for (let done = 0; done < POSTS; done += BATCH) {
    // A batch of posts, each a message and its outbox row (the shape of INSERT_MESSAGE, messages.store.ts).
    await db.query(
      `WITH m AS (
         INSERT INTO messages (workspace_id, channel_id, author_id, content)
         SELECT '00000000-0000-0000-0000-000000000001', ('00000000-0000-0000-0001-' || lpad((1 + g % 100)::text, 12, '0'))::uuid,
                '00000000-0000-0000-0000-000000000002', 'growth post ' || g
           FROM generate_series($1::int, $2::int) g RETURNING id)
       INSERT INTO outbox (event) SELECT $3::jsonb FROM m`,
      [done, done + BATCH - 1, event],
    );
    // The relay: the oldest rows read and deleted.
    await db.query(`DELETE FROM outbox WHERE id IN (SELECT id FROM outbox ORDER BY id LIMIT $1)`, [BATCH]);
    const due = started + ((done + BATCH) / (RATE / 2)) * 1000;
    if (due > Date.now()) await sleep(due - Date.now());
    if ((done + BATCH) % 100_000 === 0) {
      samples.push(await measure(db, done + BATCH));
      log(`${name}: ${done + BATCH} posts, outbox ${(samples.at(-1)!.outboxBytes / 1024).toFixed(0)} KB, ${samples.at(-1)!.outboxDead} dead, ${samples.at(-1)!.autovacuums} autovacuums`);
    }
  }
  const seconds = (Date.now() - started) / 1000;
  const atEnd = { sample: await measure(db, POSTS), outbox: await tuples(db, 'outbox'), messages: await tuples(db, 'messages') };
  log(`${name}: ${POSTS} posts in ${seconds.toFixed(0)} s; settling ${SETTLE_S} s for autovacuum`);
  await sleep(SETTLE_S * 1000);
  const settled = { sample: await measure(db, POSTS), outbox: await tuples(db, 'outbox'), messages: await tuples(db, 'messages') };
  const maxOutbox = Math.max(...samples.map((s) => s.outboxBytes), atEnd.sample.outboxBytes);
  await db.end();
  return { name, tuned, seconds, samples, maxOutboxBytes: maxOutbox, atEnd, settled };
}

const server = await PrivatePostgres.start();
try {
  const settings = new pg.Client({ connectionString: server.url('postgres') });
  await settings.connect();
  const { rows } = await settings.query(`SELECT name, setting FROM pg_settings WHERE name IN ('autovacuum', 'autovacuum_naptime', 'autovacuum_vacuum_cost_delay', 'shared_buffers')`);
  await settings.end();
  log(`private server: ${rows.map((r) => `${r.name}=${r.setting}`).join(', ')}`);
  const results = await Promise.all([run(server, 'default', false), run(server, 'tuned', true)]);
  process.stdout.write(`${JSON.stringify({ server: rows, results }, null, 2)}\n`);
} finally {
  await server.stop();
}
