import type { Knex } from 'knex';

// The planner's estimate for `search @@ query` comes from the column's list
// of most common words. With the default list (100 entries), a word outside
// it is estimated at half the rarest listed word's frequency: on a workspace
// of ten million messages a word in twelve of them looked like 100,000, so the
// planner walked every message newest first (3.7 s) instead of asking the GIN
// index (0.7 ms). A longer list gives rare words the low estimate they need;
// a common word still walks messages_workspace_seq and stops after a page
// (docs/bench.md, scenario 8: search).
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE messages ALTER COLUMN search SET STATISTICS 2000');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE messages ALTER COLUMN search SET STATISTICS -1');
}
