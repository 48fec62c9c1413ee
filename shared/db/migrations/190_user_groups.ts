import type { Knex } from 'knex';

// User groups and group mentions (level 3, contract §14; services/core/user-groups).
// A group's handle is unique in its workspace (and, checked by the service,
// never an active user's name). Members go with their group or their user.
// messages.mentioned_group_ids: "here", "channel" or group ids a message
// mentions; the people they reached are in mentioned_user_ids. A constant
// default: adding it rewrites no row.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE user_groups (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      handle text NOT NULL,
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      created_by uuid REFERENCES users(id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    -- A mention's lookup by handle, and uniqueness.
    CREATE UNIQUE INDEX user_groups_workspace_handle ON user_groups (workspace_id, handle);
    -- The list, by seq.
    CREATE INDEX user_groups_workspace_seq ON user_groups (workspace_id, seq);

    CREATE TABLE user_group_members (
      group_id uuid NOT NULL REFERENCES user_groups(id) ON DELETE CASCADE,
      user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      PRIMARY KEY (group_id, user_id)
    );
    CREATE INDEX user_group_members_user ON user_group_members (user_id);

    ALTER TABLE messages ADD COLUMN mentioned_group_ids text[] NOT NULL DEFAULT '{}';
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE messages DROP COLUMN IF EXISTS mentioned_group_ids; DROP TABLE IF EXISTS user_group_members; DROP TABLE IF EXISTS user_groups');
}
