import type { Knex } from 'knex';

// Two hints on each message for the history page, which renders 50 messages
// at a time: their thread record and reactions are looked up only where a
// message may have them (most have neither; the lookups were half the cost of
// a page). A hint is set when the first reply or reaction is written and never
// cleared: a message whose replies or reactions are gone renders as before.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE messages
      ADD COLUMN has_replies boolean NOT NULL DEFAULT false,
      ADD COLUMN has_reactions boolean NOT NULL DEFAULT false;
    UPDATE messages SET has_replies = true WHERE id IN (SELECT root_message_id FROM threads);
    UPDATE messages SET has_reactions = true WHERE id IN (SELECT message_id FROM reactions);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE messages DROP COLUMN IF EXISTS has_replies, DROP COLUMN IF EXISTS has_reactions;`);
}
