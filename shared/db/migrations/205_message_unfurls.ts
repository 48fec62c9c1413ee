import type { Knex } from 'knex';

// Link previews (contract §14, services/core/unfurls): the message's
// `unfurls` as JSON text, written as JSON.stringify writes it so that history
// pages render it byte for byte (json, not jsonb, as content_json). NULL: none
// fetched yet (a nullable column without a default: no rewrite).
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE messages ADD COLUMN unfurls json');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE messages DROP COLUMN unfurls');
}
