import type { Knex } from 'knex';

// Channel names are unique among public channels only (docs/decisions.md,
// "Private channel names"): creating or renaming a channel never fails
// because of a private channel the caller cannot see, so that failure can no
// longer tell a non-member that a private channel of that name exists.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX channels_workspace_name;
    CREATE UNIQUE INDEX channels_workspace_name ON channels (workspace_id, name) WHERE kind = 'channel' AND NOT is_private;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX channels_workspace_name;
    CREATE UNIQUE INDEX channels_workspace_name ON channels (workspace_id, name) WHERE kind = 'channel';
  `);
}
