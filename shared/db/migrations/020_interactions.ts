import type { Knex } from 'knex';

// Button actions (level 3, docs/feature-levels.md): each click is kept, so a
// bot that was offline can see what was clicked, and who did it.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE interactions (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      message_id uuid NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
      channel_id uuid NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
      action_id text NOT NULL,
      user_id uuid REFERENCES users(id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    -- a message's clicks, newest first; deleting a message finds them by it
    CREATE INDEX interactions_message ON interactions (message_id, created_at DESC);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS interactions');
}
