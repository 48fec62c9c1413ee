// The relay's read (shared/relay/outbox-table.ts) is a prepared statement its
// connection keeps for its whole life: the plan made when messages was empty
// must still read through messages_event_xid once the table has grown, with
// no statistics (autovacuum off, a restore) and with many messages that are
// not events (event_xid null: written before the event cursor, or seeded).
// It used to scan the whole table on every read: 82 ms a read at 400,000 rows.
import { expect } from 'chai';
import pg from 'pg';
import { messageCreatedEvents } from '../../services/core/messages/messages.store.js';
import { outboxTable } from '../../shared/relay/outbox-table.js';
import { RELAY_RANDOM_PAGE_COST } from '../../shared/relay/leadership.js';
import { separateStack } from '../support/separate-stack.js';

describe("the relay's read plan", function () {
  this.timeout(60_000);

  // Two ways a kept plan meets a grown table: planned on an empty one; and
  // planned after statistics that saw no event yet (a seeded or upgraded
  // database: every event_xid null, messages_event_xid empty), the case of
  // the loadtest's ten-million-message set, where the planner took a full
  // scan of the index it believed empty and filtered every event on each read.
  for (const scenario of ['planned on an empty table', 'planned after statistics that saw no event'] as const) {
    it(`stays an index range on messages_event_xid after the table grows under it (${scenario})`, async () => {
      const { stack: s, env, stop } = await separateStack({ ROLES: 'api' });
      const client = new pg.Client({ connectionString: env.config.databaseUrl });
      try {
        await client.connect();
        await client.query('DELETE FROM messages');
        const seed = (n: number) =>
          client.query(`INSERT INTO messages (workspace_id, channel_id, content) SELECT gen_random_uuid(), gen_random_uuid(), 'seeded ' || g FROM generate_series(1, ${n}) g`);
        if (scenario === 'planned after statistics that saw no event') {
          await seed(60_000);
          await client.query('ANALYZE messages');
        }
        // The statement the relay prepares, as its query function receives it.
        let statement = '';
        const table = outboxTable(
          async (sql, params) => {
            statement = sql;
            return (await client.query(sql, params as unknown[])).rows as never[];
          },
          [messageCreatedEvents(s.rt.config.featureLevel)],
        );
        await table.next({ published: false, record: false, limit: 500 });
        const done = (await client.query<{ s: string }>('SELECT pg_current_snapshot()::text AS s')).rows[0]!.s;
        // Planned once and kept (a generic plan, as after a few reads), on a connection as the relay's (shared/relay/leadership.ts).
        await client.query('SET plan_cache_mode = force_generic_plan');
        await client.query(`SET random_page_cost = ${RELAY_RANDOM_PAGE_COST}`);
        await client.query('SET jit = off');
        await client.query(`PREPARE relay_read (text, text, bigint, boolean, int) AS ${statement}`);
        await client.query(`EXECUTE relay_read('${done}', NULL, 0, false, 500)`);
        // Grown since: posted messages (events), and as many that are not events.
        await client.query(
          `INSERT INTO messages (workspace_id, channel_id, content, event_xid)
           SELECT gen_random_uuid(), gen_random_uuid(), 'posted ' || g, pg_current_xact_id() FROM generate_series(1, 60000) g`,
        );
        if (scenario === 'planned on an empty table') await seed(60_000);
        const now = (await client.query<{ s: string }>('SELECT pg_current_snapshot()::text AS s')).rows[0]!.s;
        const plan = (await client.query(`EXPLAIN (ANALYZE, COSTS OFF) EXECUTE relay_read('${now}', NULL, 0, false, 500)`)).rows
          .map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN'])
          .join('\n');
        expect(plan, plan).not.to.match(/Seq Scan on messages/);
        // Both halves of the window are index conditions on messages_event_xid: the range, and the probe of running transactions.
        expect(plan, plan).to.match(/Index Cond: \(\(event_xid >= \$\d+\) AND \(event_xid < \$\d+\)\)/);
        expect(plan, plan).to.match(/Index Cond: \(event_xid = ANY \(w_\d+\.done_xip\)\)/);
        expect(plan, plan).not.to.match(/Rows Removed by (Join )?Filter: \d{4,}/);
      } finally {
        await client.end();
        await stop();
      }
    });
  }
});
