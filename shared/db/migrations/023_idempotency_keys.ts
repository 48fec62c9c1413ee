import type { Knex } from 'knex';

// Idempotent posting (level 3): a key and the first answer to it, written in
// the transaction of what the request created, so a retry after a crash
// between the commit and the answer finds the answer instead of posting again.
// Kept 24 h, then swept by the worker (shared/http/idempotency.ts).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE idempotency_keys (
      -- u:<user id> or h:<webhook id>: keys are per caller
      caller text NOT NULL,
      key text NOT NULL,
      -- sha256 of the method, path and parsed body: a different body is a reused key
      fingerprint text NOT NULL,
      status smallint NOT NULL,
      body text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (caller, key)
    );
    -- the sweep deletes the oldest first
    CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS idempotency_keys');
}
