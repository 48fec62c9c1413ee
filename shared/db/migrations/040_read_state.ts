import type { Knex } from 'knex';

// Read state (level 3, contract §12): where each member has read up to, kept
// on the membership (only members have one; leaving forgets it). The mark is
// the message's seq, so "after it" is a range on messages_channel_seq.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE channel_members
      ADD COLUMN last_read_message_id uuid,
      ADD COLUMN last_read_seq bigint;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE channel_members DROP COLUMN IF EXISTS last_read_message_id, DROP COLUMN IF EXISTS last_read_seq');
}
