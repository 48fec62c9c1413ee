import type { Knex } from 'knex';

// Moving in from Slack (contract §13, services/core/imports/):
// - slack_import_map: what each Slack id became, so importing the same export
//   again adds nothing and a later export adds only what is new. Messages are
//   keyed by their conversation (`scope`, the Slack channel id) and `ts`, so a
//   conversation's keys are one index range (loaded once per conversation);
//   everything else has scope ''. axid_id is indexed for the way back (export).
// - imports: an import started through the API (level 3), run by the worker.
// - channels.archived_at (§14: an archived Slack channel stays archived);
//   messages.pinned_at / pinned_by (§14's pins: Slack's pinned_to comes along).
//   Nothing reads them yet beyond the import and export.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE slack_import_map (
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      kind text NOT NULL CHECK (kind IN ('user', 'bot', 'conversation', 'message', 'file')),
      scope text NOT NULL DEFAULT '',
      slack_key text NOT NULL,
      axid_id uuid NOT NULL,
      PRIMARY KEY (workspace_id, kind, scope, slack_key)
    );
    CREATE INDEX slack_import_map_axid ON slack_import_map (axid_id);

    CREATE TABLE imports (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      created_by uuid REFERENCES users(id) ON DELETE SET NULL,
      source text NOT NULL CHECK (source IN ('slack')),
      status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'finished', 'failed')),
      storage_key text NOT NULL,
      counts json NOT NULL DEFAULT '{}',
      report json,
      error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      started_at timestamptz,
      finished_at timestamptz
    );

    ALTER TABLE channels ADD COLUMN IF NOT EXISTS archived_at timestamptz;
    ALTER TABLE messages ADD COLUMN IF NOT EXISTS pinned_at timestamptz,
                         ADD COLUMN IF NOT EXISTS pinned_by uuid;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE messages DROP COLUMN IF EXISTS pinned_at, DROP COLUMN IF EXISTS pinned_by;
    ALTER TABLE channels DROP COLUMN IF EXISTS archived_at;
    DROP TABLE IF EXISTS imports, slack_import_map;
  `);
}
