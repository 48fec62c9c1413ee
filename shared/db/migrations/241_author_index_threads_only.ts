import type { Knex } from 'knex';

// messages_author_seq (migration 235) held an entry for every message, so
// every post paid for it (about 90 bytes of WAL and an index insert: scenario
// 1's WAL per post went from 1.21x to 1.69x the floor's with this index and
// retention's). Its one reader, the followed threads (GET /threads), needs
// only the messages that are in a thread: replies, and roots that have had a
// reply (has_replies is set by the first reply and never cleared). A
// top-level post without replies now pays nothing for it; a root pays once,
// when its first reply sets the hint.
// IF NOT EXISTS: on a big table an operator builds it first, CONCURRENTLY
// (docs/operations.md, "Upgrades").
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE INDEX IF NOT EXISTS messages_author_thread_seq ON messages (author_id, seq DESC)
      WHERE author_id IS NOT NULL AND (thread_id IS NOT NULL OR has_replies);
    DROP INDEX IF EXISTS messages_author_seq;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE INDEX IF NOT EXISTS messages_author_seq ON messages (author_id, seq DESC) WHERE author_id IS NOT NULL;
    DROP INDEX IF EXISTS messages_author_thread_seq;
  `);
}
