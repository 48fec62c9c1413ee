import type { Knex } from 'knex';

// Scoped keys (contract §15, level 3; shared/scopes.ts): what a key may do
// and which conversations it reaches. NULL is no limit, which every key made
// before keeps. An event subscription remembers the conversations of the key
// that made it, and delivers only their events.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE api_keys
      ADD COLUMN scopes text[],
      ADD COLUMN conversation_ids uuid[];
    ALTER TABLE event_subscriptions ADD COLUMN conversation_ids uuid[];
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE event_subscriptions DROP COLUMN IF EXISTS conversation_ids;
    ALTER TABLE api_keys DROP COLUMN IF EXISTS conversation_ids, DROP COLUMN IF EXISTS scopes;
  `);
}
