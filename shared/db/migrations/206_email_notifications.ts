import type { Knex } from 'knex';

// Email for the ones who are away (contract §14, services/core/email):
// - users.email_notifications ('mentions' | 'never') and email_notified_at
//   (the last email sent, for at most one per 15 minutes);
// - email_state (one row): the key that signs unsubscribe links (in the
//   database: every process reads the same one);
// - email_scan: per workspace, the seq up to which its messages were looked
//   at for mentions and DMs (messages_workspace_seq), so each is read once;
// - email_pending: the mentions and DMs found for a person, until they are
//   read, emailed, or the person turns emails off;
// No index is added to messages: an index on seq alone would be the
// planner's pick for history pages (ORDER BY seq) over messages_channel_seq.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE users
      ADD COLUMN email_notifications text NOT NULL DEFAULT 'mentions' CHECK (email_notifications IN ('mentions', 'never')),
      ADD COLUMN email_notified_at timestamptz;
    CREATE TABLE email_state (id int PRIMARY KEY CHECK (id = 1), signing_key bytea NOT NULL);
    CREATE TABLE email_scan (workspace_id uuid PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE, seq bigint NOT NULL);
    -- the workspaces where someone wants email (the scan's list)
    CREATE INDEX users_email_notify ON users (workspace_id) WHERE email IS NOT NULL AND email_notifications = 'mentions' AND deactivated_at IS NULL AND NOT is_agent;
    CREATE TABLE email_pending (
      user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      message_id uuid NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
      PRIMARY KEY (user_id, message_id)
    );
    CREATE INDEX email_pending_message ON email_pending (message_id);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX IF EXISTS users_email_notify;
    DROP TABLE IF EXISTS email_scan;
    DROP TABLE IF EXISTS email_pending;
    DROP TABLE IF EXISTS email_state;
    ALTER TABLE users DROP COLUMN IF EXISTS email_notifications, DROP COLUMN IF EXISTS email_notified_at;
  `);
}
