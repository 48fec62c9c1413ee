import type { Knex } from 'knex';

// The outboxes (outbox, job_outbox) are queues: every row is inserted, read
// once and deleted within a second or so, so the table holds a few hundred
// live rows and, between two vacuums, every dead one of the posts since. With
// PostgreSQL's defaults a vacuum of it is throttled (autovacuum_vacuum_cost_delay
// 2 ms) and may come only after 20% of a table whose statistics were taken
// when it was nearly empty; the relay then walks dead index entries to find
// the oldest live rows. Here: vacuum after a fixed number of dead rows (no
// scale factor; the live count says nothing about a queue), unthrottled (the
// table is small, a pass is cheap), and no insert-triggered vacuums (the rows
// never stay). Measured in docs/scaling.md, "Growth" (test/bench/growth.ts).
const TABLES = ['outbox', 'job_outbox'];
const SETTINGS = `autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 10000,
                  autovacuum_vacuum_cost_delay = 0, autovacuum_vacuum_insert_threshold = -1`;

export async function up(knex: Knex): Promise<void> {
  for (const table of TABLES) await knex.raw(`ALTER TABLE ${table} SET (${SETTINGS})`);
}

export async function down(knex: Knex): Promise<void> {
  for (const table of TABLES) {
    await knex.raw(
      `ALTER TABLE ${table} RESET (autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold, autovacuum_vacuum_cost_delay, autovacuum_vacuum_insert_threshold)`,
    );
  }
}
