import type { Knex } from 'knex';

// Scheduled messages and reminders (level 3, contract §14). Each is a row the
// worker turns into a message at its time: a delayed BullMQ job recorded in the
// job outbox (job_outbox.run_at: the publisher enqueues it with the delay left),
// and the row's `scheduled` → `sent` transition in the post's own transaction,
// so a job run twice (a worker killed after posting, before acknowledging)
// finds the row sent and posts nothing.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE job_outbox ADD COLUMN run_at timestamptz;

    CREATE TABLE scheduled_messages (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      seq bigint GENERATED ALWAYS AS IDENTITY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      author_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      channel_id uuid NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
      -- no foreign key: a root deleted meanwhile fails the post, with its reason
      thread_id uuid,
      content text NOT NULL,
      content_json jsonb,
      metadata jsonb,
      send_at timestamptz NOT NULL,
      status text NOT NULL DEFAULT 'scheduled' CHECK (status IN ('scheduled', 'sent', 'failed')),
      error text,
      message_id uuid,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    -- GET /scheduled-messages: the caller's own, newest first, by keyset
    CREATE INDEX scheduled_messages_author_seq ON scheduled_messages (author_id, seq);
    -- the worker's reconcile pass: the ones past due whose job Redis lost
    CREATE INDEX scheduled_messages_due ON scheduled_messages (send_at) WHERE status = 'scheduled';

    CREATE TABLE reminders (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      seq bigint GENERATED ALWAYS AS IDENTITY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      text text,
      -- no foreign keys: a reminder outlives its message (the DM then says it was deleted)
      message_id uuid,
      channel_id uuid,
      remind_at timestamptz NOT NULL,
      status text NOT NULL DEFAULT 'scheduled' CHECK (status IN ('scheduled', 'sent', 'failed')),
      error text,
      sent_message_id uuid,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX reminders_user_seq ON reminders (user_id, seq);
    CREATE INDEX reminders_due ON reminders (remind_at) WHERE status = 'scheduled';

    -- The workspace's system agent ("Axid"), which sends reminders; made when first needed.
    ALTER TABLE workspaces ADD COLUMN system_agent_id uuid REFERENCES users(id) ON DELETE SET NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE workspaces DROP COLUMN IF EXISTS system_agent_id;
    DROP TABLE IF EXISTS reminders;
    DROP TABLE IF EXISTS scheduled_messages;
    ALTER TABLE job_outbox DROP COLUMN IF EXISTS run_at;
  `);
}
