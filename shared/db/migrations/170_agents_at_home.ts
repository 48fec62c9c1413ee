import type { Knex } from 'knex';

// Agents at home (level 3, contract §15): suggested prompts on an agent, its
// slash commands, feedback and approval answers on messages, and the loop
// guard's count of agent messages in a row (docs/bots.md).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE users ADD COLUMN suggested_prompts jsonb;

    -- How many agent messages in a row end with this one, in its thread (or at
    -- the top level of its conversation): set by an agent's post from the
    -- message before it, NULL (none) for everyone else's. No default: the
    -- column costs a person's post nothing.
    ALTER TABLE messages ADD COLUMN agent_chain smallint;

    CREATE TABLE agent_commands (
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      name text NOT NULL,
      user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      description text NOT NULL,
      usage text,
      created_at timestamptz NOT NULL DEFAULT now(),
      seq bigint GENERATED ALWAYS AS IDENTITY,
      -- a name is one agent's in the workspace (409 name_taken)
      PRIMARY KEY (workspace_id, name)
    );
    -- an agent's own commands (replaced together by PUT /users/me/commands)
    CREATE INDEX agent_commands_user ON agent_commands (user_id);
    -- GET /commands pages, in the order declared
    CREATE INDEX agent_commands_workspace_seq ON agent_commands (workspace_id, seq);

    CREATE TABLE message_feedback (
      message_id uuid NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
      user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      value text NOT NULL CHECK (value IN ('positive', 'negative')),
      updated_at timestamptz NOT NULL DEFAULT now(),
      -- one value per person and message
      PRIMARY KEY (message_id, user_id)
    );

    CREATE TABLE approval_decisions (
      -- one answer per request: the first insert wins, the next meets the key (409)
      message_id uuid PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      user_id uuid REFERENCES users(id) ON DELETE SET NULL,
      decision text NOT NULL CHECK (decision IN ('approve', 'deny')),
      comment text,
      decided_at timestamptz NOT NULL DEFAULT now()
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE IF EXISTS approval_decisions;
    DROP TABLE IF EXISTS message_feedback;
    DROP TABLE IF EXISTS agent_commands;
    ALTER TABLE messages DROP COLUMN IF EXISTS agent_chain;
    ALTER TABLE users DROP COLUMN IF EXISTS suggested_prompts;
  `);
}
