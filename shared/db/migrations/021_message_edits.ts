import type { Knex } from 'knex';

// Edit history (level 3): every edit keeps the version it replaces. A
// message's versions go with it (ON DELETE CASCADE): deleting a message
// deletes its history.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE message_edits (
      seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      message_id uuid NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
      content text NOT NULL,
      content_json json,
      metadata json,
      -- when this version was written (the message's created_at for the first one)
      edited_at timestamptz NOT NULL,
      editor_id uuid REFERENCES users(id) ON DELETE SET NULL
    );
    -- a message's versions, newest first
    CREATE INDEX message_edits_message_seq ON message_edits (message_id, seq DESC);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS message_edits');
}
