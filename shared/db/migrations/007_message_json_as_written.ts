import type { Knex } from 'knex';

// A message's content_json, metadata and display are kept as the JSON text the
// API wrote (json), not re-encoded (jsonb). jsonb reorders keys, adds spaces
// and rewrites numbers (1e+21 becomes 1000000000000000000000), so a history
// page rendered by Postgres differed from the same message rendered by
// the message presenter. Nothing queries inside these columns.
const COLUMNS = ['content_json', 'metadata', 'display'];

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE messages ${COLUMNS.map((c) => `ALTER COLUMN ${c} TYPE json USING ${c}::text::json`).join(', ')}`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE messages ${COLUMNS.map((c) => `ALTER COLUMN ${c} TYPE jsonb USING ${c}::jsonb`).join(', ')}`);
}
