// `tsx test/bench/history-render.ts`: what one history page costs each side
// of the database connection, for the page as Axid renders it (rows selected,
// rendered in Node by messagePresenter: listMessages) against the page
// rendered as JSON by Postgres (the Message's SQL rendering, `MessageSql.json`,
// which history pages used before and search, pins and the relay still use).
// Counted, not timed, so that a machine shared with other work gives the same
// figures: Node's own CPU (process.cpuUsage) per 1,000 pages, the backend's
// CPU (/proc/<pid>/stat) per 1,000 pages, and the buffers each statement
// touches (EXPLAIN (ANALYZE, BUFFERS)). The two designs run in alternating
// blocks on one connection each, over scenario 2's channel (100,000 messages
// seeded the same way), random cursors.
//
// HISTORY_RENDER_PAGES (default 2000) pages per block, HISTORY_RENDER_BLOCKS
// (default 4) blocks per design; the database it makes is dropped at the end.
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import pg from 'pg';
import { createDb, ensureDatabase, runPrepared, type PreparedStatement } from '../../shared/db/knex.js';
import { migrateLatest } from '../../shared/db/migrate.js';
import { listMessages, messageSqlAt } from '../../services/core/messages/messages.store.js';
import { cpuMsOf } from './lib/proc.js';

const PAGES = Number(process.env.HISTORY_RENDER_PAGES ?? 2000);
const BLOCKS = Number(process.env.HISTORY_RENDER_BLOCKS ?? 4);
const ROWS = Number(process.env.BENCH_HISTORY_ROWS ?? 100_000);
const LEVEL = process.env.FEATURE_LEVEL === '3' ? 3 : 2;
const log = (msg: string) => process.stderr.write(`[history-render] ${msg}\n`);

/** Today's page as the SQL rendering gives it: the statement history pages ran before rows were rendered in Node. */
export const jsonPageStatement = (json: string, where = 'm.channel_id = $1 AND m.thread_id IS NULL'): PreparedStatement => ({
  name: `bench_json_page_${LEVEL}`,
  text: `SELECT coalesce('[' || string_agg(p.message::text, ',' ORDER BY p.seq DESC) FILTER (WHERE p.n <= $3) || ']', '[]') AS data,
                min(p.seq) FILTER (WHERE p.n <= $3) AS last_seq, count(*) > $3 AS has_more
           FROM (SELECT m.seq, row_number() OVER (ORDER BY m.seq DESC) AS n, ${json} AS message
                   FROM messages m WHERE ${where} AND m.seq < $2::bigint ORDER BY m.seq DESC LIMIT $3::int + 1) p`,
});

async function main() {
  const name = `axid_history_render_${randomBytes(4).toString('hex')}`;
  const url = `postgres://postgres@127.0.0.1:5432/${name}`;
  await ensureDatabase(url);
  const admin = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
  await admin.connect();
  const db = createDb(url, 4);
  const sides = { rows: createDb(url, 1), json: createDb(url, 1) };
  try {
    await migrateLatest(db);
    const [ws] = await db('workspaces').insert({ name: 'w' }).returning('id');
    const [user] = await db('users').insert({ workspace_id: ws.id, name: 'u', role: 'owner' }).returning('id');
    const [channel] = await db('channels').insert({ workspace_id: ws.id, name: 'c', created_by: user.id }).returning('id');
    await db.raw(
      `INSERT INTO messages (workspace_id, channel_id, author_id, content, created_at)
       SELECT ?, ?, ?, 'history message ' || g || ': ' || md5(g::text), now() - make_interval(secs => ? - g) FROM generate_series(1, ?::int) g`,
      [ws.id, channel.id, user.id, ROWS, ROWS],
    );
    await db.raw('ANALYZE');
    const { lo, hi } = (await db.raw('SELECT min(seq)::int AS lo, max(seq)::int AS hi FROM messages')).rows[0];
    const sql = messageSqlAt(LEVEL);
    const jsonPage = jsonPageStatement(sql.json);
    const cursor = () => String(lo + 51 + Math.floor(Math.random() * (hi + 1 - lo - 51)));
    const pageOf = {
      rows: (before: string) => listMessages(sides.rows, sql, { channelId: channel.id, before: Number(before), limit: 50 }),
      json: async (before: string) => (await runPrepared<{ data: string }>(sides.json, jsonPage, [channel.id, before, 50])).rows[0]!.data,
    };
    // The two give the same bytes (test/api/history-rendering.test.ts holds it over a varied corpus).
    const probe = cursor();
    const same = (await pageOf.rows(probe)).data === (await pageOf.json(probe));
    log(`level ${LEVEL}; same bytes on a probe page: ${same}`);
    const backend = async (k: keyof typeof sides) => {
      const conn = (await sides[k].client.acquireConnection()) as pg.Client;
      const pid = (await conn.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
      await sides[k].client.releaseConnection(conn);
      return pid;
    };
    const pids = { rows: await backend('rows'), json: await backend('json') };
    const totals = { rows: { node: 0, pg: 0, ms: 0, pages: 0 }, json: { node: 0, pg: 0, ms: 0, pages: 0 } };
    for (let b = 0; b < BLOCKS * 2; b++) {
      const k = b % 2 === 0 ? 'json' : 'rows';
      const cursors = Array.from({ length: PAGES }, cursor);
      const pg0 = cpuMsOf(pids[k]);
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      for (const c of cursors) await pageOf[k](c);
      const cpu = process.cpuUsage(cpu0);
      totals[k].node += (cpu.user + cpu.system) / 1000;
      totals[k].pg += cpuMsOf(pids[k]) - pg0;
      totals[k].ms += performance.now() - t0;
      totals[k].pages += PAGES;
      log(`block ${b + 1}: ${k}, load average ${os.loadavg()[0]!.toFixed(2)}`);
    }
    const explain = async (text: string, values: unknown[]) => {
      const conn = (await db.client.acquireConnection()) as pg.Client;
      const { rows } = await conn.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`, values).finally(() => db.client.releaseConnection(conn));
      const plan = rows[0]['QUERY PLAN'][0];
      return { buffers: plan.Plan['Shared Hit Blocks'] + plan.Plan['Shared Read Blocks'], execMs: plan['Execution Time'] as number };
    };
    const c = cursor();
    const ex = { rows: await explain(sql.channelPage.text, [channel.id, c, 50]), json: await explain(jsonPage.text, [channel.id, c, 50]) };
    const per = (t: { node: number; pg: number; ms: number; pages: number }) => ({
      nodeMsPer1000: (t.node / t.pages) * 1000,
      pgMsPer1000: (t.pg / t.pages) * 1000,
      wallMsPer1000: (t.ms / t.pages) * 1000,
    });
    const out = { level: LEVEL, rows: ROWS, pagesPerSide: totals.rows.pages, loadAverage: os.loadavg(), rowsInNode: { ...per(totals.rows), ...ex.rows }, jsonInSql: { ...per(totals.json), ...ex.json } };
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
  } finally {
    await db.destroy();
    await sides.rows.destroy();
    await sides.json.destroy();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    log(`failed: ${(err as Error).stack ?? err}`);
    process.exit(1);
  },
);
