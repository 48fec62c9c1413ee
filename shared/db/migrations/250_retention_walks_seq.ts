import type { Knex } from 'knex';

// Retention's walk without an index entry per post. messages_channel_created
// (migration 140) gave every top-level post one more index insert, about 85
// bytes of its 616 of WAL (scenario 1 judged WAL per post against the floor's
// and failed at 1.42x). A posted message's created_at is taken when it is
// posted, so within a conversation it follows seq; retention now walks the
// conversation oldest first on messages_channel_seq and stops at the first
// message it keeps (services/core/retention/retention.store.ts). Only
// messages that published no event (event_xid NULL: Slack history imported
// with its old times and new seqs, rows written before migration 080,
// streamed posts) can be older than messages before them in seq: they alone
// keep a (channel, created_at) entry, in this smaller index.
// IF NOT EXISTS: on a big table an operator builds it first, CONCURRENTLY
// (docs/operations.md, "Upgrades").
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE INDEX IF NOT EXISTS messages_unpublished_channel_created ON messages (channel_id, created_at)
      WHERE thread_id IS NULL AND event_xid IS NULL;
    DROP INDEX IF EXISTS messages_channel_created;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE INDEX IF NOT EXISTS messages_channel_created ON messages (channel_id, created_at) WHERE thread_id IS NULL;
    DROP INDEX IF EXISTS messages_unpublished_channel_created;
  `);
}
