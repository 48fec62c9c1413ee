import type { Knex } from 'knex';

// Pins and archived channels (issue 36, contract §14). The Slack import adds
// the same columns (`ADD COLUMN IF NOT EXISTS`, the same names and types), so
// whichever migration runs first makes them and the other changes nothing.
// Nullable, no default: no table rewrite.
// messages_channel_pins: a conversation's pins, newest first, and their count
// (at most 100), without reading its other messages.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE channels ADD COLUMN IF NOT EXISTS archived_at timestamptz;
    ALTER TABLE messages ADD COLUMN IF NOT EXISTS pinned_at timestamptz;
    ALTER TABLE messages ADD COLUMN IF NOT EXISTS pinned_by uuid;
    CREATE INDEX IF NOT EXISTS messages_channel_pins ON messages (channel_id, pinned_at DESC, id DESC) WHERE pinned_at IS NOT NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX IF EXISTS messages_channel_pins;
    ALTER TABLE messages DROP COLUMN IF EXISTS pinned_by;
    ALTER TABLE messages DROP COLUMN IF EXISTS pinned_at;
    ALTER TABLE channels DROP COLUMN IF EXISTS archived_at;
  `);
}
