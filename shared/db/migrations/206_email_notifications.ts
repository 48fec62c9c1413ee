import type { Knex } from 'knex';

// Email for the ones who are away (contract §14, services/core/email):
// - users.email_notifications ('mentions' | 'never') and email_notified_at
//   (the last email sent, for at most one per 15 minutes);
// - email_state (one row): the seq up to which messages were looked at for
//   mentions and DMs, so each message is read once, and the key that signs
//   unsubscribe links (in the database: every process reads the same one);
// - email_pending: the mentions and DMs found for a person, until they are
//   read, emailed, or the person turns emails off;
// - messages_seq: the scan from the cursor on (an increasing key: the
//   cheapest index there is to keep).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE users
      ADD COLUMN email_notifications text NOT NULL DEFAULT 'mentions' CHECK (email_notifications IN ('mentions', 'never')),
      ADD COLUMN email_notified_at timestamptz;
    CREATE TABLE email_state (id int PRIMARY KEY CHECK (id = 1), seq bigint NOT NULL, signing_key bytea NOT NULL);
    CREATE TABLE email_pending (
      user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      message_id uuid NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
      PRIMARY KEY (user_id, message_id)
    );
    CREATE INDEX email_pending_message ON email_pending (message_id);
    CREATE INDEX messages_seq ON messages (seq);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX IF EXISTS messages_seq;
    DROP TABLE IF EXISTS email_pending;
    DROP TABLE IF EXISTS email_state;
    ALTER TABLE users DROP COLUMN IF EXISTS email_notifications, DROP COLUMN IF EXISTS email_notified_at;
  `);
}
