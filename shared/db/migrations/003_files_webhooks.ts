import type { Knex } from 'knex';

// Files (uploaded to S3, post-processed by the worker) and incoming webhooks.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE files (
      id uuid PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      uploader_id uuid REFERENCES users(id) ON DELETE SET NULL,
      name text NOT NULL,
      size bigint NOT NULL CHECK (size >= 0),
      -- the type the client claimed, replaced by the sniffed one once processed
      content_type text NOT NULL,
      status text NOT NULL DEFAULT 'processing' CHECK (status IN ('processing', 'ready', 'failed')),
      failure_reason text,
      sha256 text,
      width integer,
      height integer,
      storage_key text NOT NULL,
      thumbnail_key text,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX files_workspace_seq ON files (workspace_id, seq);

    -- id is the random posting id (the credential): looked up through the
    -- primary key only, never compared in application code.
    -- channel_id has no foreign key on purpose: a hook whose channel is gone
    -- stays and answers 404 channel_not_found instead of vanishing.
    CREATE TABLE incoming_webhooks (
      id text PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      channel_id uuid NOT NULL,
      name text NOT NULL,
      created_by uuid REFERENCES users(id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    -- admins list every hook of the workspace, members their own
    CREATE INDEX incoming_webhooks_workspace_seq ON incoming_webhooks (workspace_id, seq);
    CREATE INDEX incoming_webhooks_creator_seq ON incoming_webhooks (created_by, seq);

    -- A compatible post's attachments, kept until the worker has rendered
    -- them into the message (the row's presence makes rendering run once).
    CREATE TABLE webhook_renders (
      message_id uuid PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
      text text,
      attachments jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );

    -- webhook ids are random text (more than a uuid's 122 bits), not uuids
    ALTER TABLE messages ALTER COLUMN webhook_id TYPE text;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE messages ALTER COLUMN webhook_id TYPE uuid USING NULL;
    DROP TABLE IF EXISTS webhook_renders, incoming_webhooks, files;
  `);
}
