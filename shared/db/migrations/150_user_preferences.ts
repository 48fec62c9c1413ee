import type { Knex } from 'knex';

// A person's preferences (level 3): the conversations they muted and the web
// app's theme, kept on the server so they follow the person from device to
// device (docs/web.md). One row per user, written on the first change; no row
// reads as the defaults. Deleted with the user.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE user_preferences (
      user_id uuid PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      muted_conversation_ids uuid[] NOT NULL DEFAULT '{}',
      theme text NOT NULL DEFAULT 'system' CHECK (theme IN ('system', 'light', 'dark')),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS user_preferences');
}
