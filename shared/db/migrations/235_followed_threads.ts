import type { Knex } from 'knex';

// Followed threads (level 3, GET /threads; services/core/threads). A person
// follows a thread they started, replied to or were mentioned in (its root or
// a reply), as in Slack and Mattermost; nothing is stored for that, it is
// found by three indexes:
// - messages_author_seq: the person's messages (roots they started, replies
//   they wrote, and their newest reply in a thread, which counts as read);
// - messages_mentioned_users: messages mentioning them (GIN, only messages
//   that mention anyone);
// thread_read_marks: how far they have read each thread, by reply seq, kept
// apart from channel_members' mark, which counts top-level messages only.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE INDEX IF NOT EXISTS messages_author_seq ON messages (author_id, seq DESC) WHERE author_id IS NOT NULL;
    CREATE INDEX IF NOT EXISTS messages_mentioned_users ON messages USING gin (mentioned_user_ids) WHERE mentioned_user_ids <> '{}';
    CREATE TABLE thread_read_marks (
      user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      root_message_id uuid NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
      last_read_seq bigint NOT NULL,
      last_read_message_id uuid NOT NULL,
      PRIMARY KEY (user_id, root_message_id)
    );
    CREATE INDEX thread_read_marks_root ON thread_read_marks (root_message_id);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE IF EXISTS thread_read_marks;
    DROP INDEX IF EXISTS messages_mentioned_users;
    DROP INDEX IF EXISTS messages_author_seq;
  `);
}
