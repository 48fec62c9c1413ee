import type { Knex } from 'knex';

// The audit log and message retention (contract §16, docs/operations.md).
// - audit_log: one row per security-relevant action, written by the one audit
//   writer (services/core/audit/audit.store.ts) in the action's transaction.
//   actor_id carries no foreign key: an entry outlives whatever it names.
//   GET /audit-log walks (workspace, seq) newest first, filtered by action or
//   actor on indexes of their own; the retention job prunes by created_at.
// - channels.retention_days and retention_set: a channel's own retention,
//   which replaces the workspace's settings.retention_days once set
//   (retention_set; retention_days null then keeps the channel for ever).
//   Unset, the channel follows the workspace.
// - messages_channel_created: the retention job's walk, a channel's oldest
//   top-level messages first. Partial (top-level only: replies go with their
//   root), so a reply pays nothing; a top-level post pays one index entry.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE audit_log (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      seq bigint GENERATED ALWAYS AS IDENTITY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      action text NOT NULL,
      actor_id uuid,
      actor_is_agent boolean NOT NULL DEFAULT false,
      target_type text,
      target_id text,
      ip text,
      user_agent text,
      details jsonb NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX audit_log_workspace_seq ON audit_log (workspace_id, seq DESC);
    CREATE INDEX audit_log_workspace_action_seq ON audit_log (workspace_id, action, seq DESC);
    CREATE INDEX audit_log_workspace_actor_seq ON audit_log (workspace_id, actor_id, seq DESC);
    CREATE INDEX audit_log_created ON audit_log (created_at);

    ALTER TABLE channels ADD COLUMN retention_days integer CHECK (retention_days >= 1), ADD COLUMN retention_set boolean NOT NULL DEFAULT false;
    -- IF NOT EXISTS: on a big table an operator builds it first, CONCURRENTLY (docs/operations.md, "Upgrades")
    CREATE INDEX IF NOT EXISTS messages_channel_created ON messages (channel_id, created_at) WHERE thread_id IS NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX IF EXISTS messages_channel_created;
    ALTER TABLE channels DROP COLUMN IF EXISTS retention_days, DROP COLUMN IF EXISTS retention_set;
    DROP TABLE IF EXISTS audit_log;
  `);
}
