import type { Knex } from 'knex';

// Event subscriptions (level 3, contract §11; services/core/event-subscriptions):
// an address the worker POSTs its owner's events to, and the log of the last
// attempts per subscription. A subscription goes with its user.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE event_subscriptions (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      url text NOT NULL,
      events text[] NOT NULL,
      status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
      -- Signing needs the secret itself (HMAC), so it is kept, never shown again.
      secret text NOT NULL,
      previous_secret text,
      previous_secret_until timestamptz,
      -- The first failed attempt since the last success: 24 h later the subscription is disabled.
      failing_since timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    -- Matching an event: the active subscriptions of its workspace.
    CREATE INDEX event_subscriptions_workspace_active ON event_subscriptions (workspace_id) WHERE status = 'active';
    -- A user's own list, and the five-per-user count.
    CREATE INDEX event_subscriptions_user_seq ON event_subscriptions (user_id, seq);
    CREATE INDEX event_subscriptions_workspace_seq ON event_subscriptions (workspace_id, seq);

    CREATE TABLE event_deliveries (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      subscription_id uuid NOT NULL REFERENCES event_subscriptions(id) ON DELETE CASCADE,
      event_id text NOT NULL,
      event_type text NOT NULL,
      attempt integer NOT NULL,
      status_code integer,
      error text,
      duration_ms integer NOT NULL,
      delivered_at timestamptz NOT NULL DEFAULT now()
    );
    -- The log page (newest 100) and its pruning.
    CREATE INDEX event_deliveries_subscription_id ON event_deliveries (subscription_id, id DESC);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS event_deliveries; DROP TABLE IF EXISTS event_subscriptions');
}
