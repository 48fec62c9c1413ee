import type { Knex } from 'knex';

// Streamed agent replies (level 3): a message posted with `streaming: true`
// grows by appends until its author finishes it, or the worker's sweep does
// once it has been left alone for STREAMING_TIMEOUT seconds. `streaming_at` is
// its last append (or its creation); null once finished.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE messages ADD COLUMN streaming boolean NOT NULL DEFAULT false,
                         ADD COLUMN streaming_at timestamptz;
    -- the sweep's query: the few messages still streaming, oldest activity first
    CREATE INDEX messages_streaming_at ON messages (streaming_at) WHERE streaming;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS messages_streaming_at; ALTER TABLE messages DROP COLUMN IF EXISTS streaming, DROP COLUMN IF EXISTS streaming_at');
}
