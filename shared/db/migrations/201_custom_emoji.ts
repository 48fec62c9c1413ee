import type { Knex } from 'knex';

// Custom emoji (level 3, contract §14): a workspace's own `:name:`. The upload
// is kept as sent (`original_key`) until the worker has stored it at most
// 128×128 (`image_key`); only then is it listed and served.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE custom_emoji (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      seq bigint GENERATED ALWAYS AS IDENTITY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      name text NOT NULL,
      original_key text NOT NULL,
      image_key text,
      status text NOT NULL DEFAULT 'processing' CHECK (status IN ('processing', 'ready', 'failed')),
      created_by uuid REFERENCES users(id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    -- one emoji per name in a workspace
    CREATE UNIQUE INDEX custom_emoji_workspace_name ON custom_emoji (workspace_id, name);
    -- GET /emoji, newest first by keyset
    CREATE INDEX custom_emoji_workspace_seq ON custom_emoji (workspace_id, seq);
    -- the worker's reconcile pass: uploads whose job Redis lost
    CREATE INDEX custom_emoji_processing ON custom_emoji (created_at) WHERE status = 'processing';
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS custom_emoji');
}
