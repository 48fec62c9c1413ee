import type { Knex } from 'knex';

// The core schema. Every row belongs to a workspace (multi-tenant from the
// first table); every hot query has its index named after what it serves.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE workspaces (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      name text NOT NULL,
      settings jsonb NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE users (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      seq bigint GENERATED ALWAYS AS IDENTITY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      name text NOT NULL,
      display_name text,
      avatar_url text,
      role text NOT NULL DEFAULT 'member' CHECK (role IN ('owner', 'admin', 'member')),
      is_agent boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now(),
      deactivated_at timestamptz
    );
    -- member lists walk by seq; names are unique among active users
    CREATE INDEX users_workspace_seq ON users (workspace_id, seq) WHERE deactivated_at IS NULL;
    CREATE UNIQUE INDEX users_workspace_name ON users (workspace_id, name) WHERE deactivated_at IS NULL;

    CREATE TABLE api_keys (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      seq bigint GENERATED ALWAYS AS IDENTITY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      name text NOT NULL,
      prefix text NOT NULL,
      key_hash text NOT NULL UNIQUE,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz,
      revoked_at timestamptz
    );
    CREATE INDEX api_keys_user_seq ON api_keys (user_id, seq) WHERE revoked_at IS NULL;

    -- Channels, 1:1 DMs and group DMs share one table (and so one message,
    -- membership and event path); kind tells them apart.
    CREATE TABLE channels (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      seq bigint GENERATED ALWAYS AS IDENTITY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      kind text NOT NULL DEFAULT 'channel' CHECK (kind IN ('channel', 'dm', 'group_dm')),
      name text,
      description text NOT NULL DEFAULT '',
      is_private boolean NOT NULL DEFAULT false,
      is_default boolean NOT NULL DEFAULT false,
      parent_channel_id uuid REFERENCES channels(id) ON DELETE SET NULL,
      team_id uuid,
      -- sorted member ids of a DM: the same set of people finds the same conversation
      member_key text,
      created_by uuid REFERENCES users(id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX channels_workspace_name ON channels (workspace_id, name) WHERE kind = 'channel';
    CREATE UNIQUE INDEX channels_workspace_member_key ON channels (workspace_id, member_key) WHERE kind <> 'channel';
    CREATE INDEX channels_workspace_seq ON channels (workspace_id, seq) WHERE kind = 'channel';
    CREATE INDEX channels_workspace_default ON channels (workspace_id) WHERE is_default AND kind = 'channel';

    CREATE TABLE channel_members (
      channel_id uuid NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
      user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      seq bigint GENERATED ALWAYS AS IDENTITY,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (channel_id, user_id)
    );
    -- "which channels is this user in" (stream connect, channel list)
    CREATE INDEX channel_members_user ON channel_members (user_id, channel_id);
    CREATE INDEX channel_members_channel_seq ON channel_members (channel_id, seq);

    CREATE TABLE messages (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      seq bigint GENERATED ALWAYS AS IDENTITY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      channel_id uuid NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
      author_id uuid REFERENCES users(id) ON DELETE SET NULL,
      thread_id uuid REFERENCES messages(id) ON DELETE CASCADE,
      content text NOT NULL,
      content_json jsonb,
      metadata jsonb,
      card_origin text,
      mentioned_user_ids uuid[] NOT NULL DEFAULT '{}',
      -- display-only overrides set by incoming webhooks (username, icon_emoji, icon_url)
      display jsonb,
      webhook_id uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      edited_at timestamptz
    );
    -- channel history page: top-level messages newest first
    CREATE INDEX messages_channel_seq ON messages (channel_id, seq DESC) WHERE thread_id IS NULL;
    -- thread replies page
    CREATE INDEX messages_thread_seq ON messages (thread_id, seq DESC) WHERE thread_id IS NOT NULL;

    CREATE TABLE threads (
      root_message_id uuid PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      channel_id uuid NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
      reply_count integer NOT NULL DEFAULT 0,
      last_reply_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE reactions (
      message_id uuid NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
      user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      emoji text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (message_id, emoji, user_id)
    );

    -- Transactional outbox: written in the same transaction as the change,
    -- relayed to the Redis stream and deleted (shared/events).
    CREATE TABLE outbox (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      event jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE IF EXISTS outbox, reactions, threads, messages, channel_members, channels, api_keys, users, workspaces CASCADE;
  `);
}
