import type { Knex } from 'knex';

// Search's words move out of the messages row into a table of their own,
// written only where search exists (level 3). As a generated column of every
// message (migration 024) they doubled the cost of a post for every
// deployment: the stored tsvector and its GIN entries took Postgres from
// 5,500 to 2,800 inserts/s and tripled the WAL of an insert, at level 2 too,
// where nothing can search (docs/bench.md, "What search costs a post").
// - message_search: one row per indexed message, written by the post's own
//   statement at level 3 (services/core/messages/messages.store.ts), with the
//   columns a search filters and orders by, so a search reads this table's
//   indexes and joins messages by primary key for the page;
// - axid_search_vector: the one definition of a message's words (english
//   stems and simple words, as 024 had them);
// - a trigger re-indexes a message whose content changes (edit, streamed
//   append, finish), only where it has a row: at level 2 it finds none;
// - search_backfill: the transaction id below which every post is indexed;
//   the level-3 worker indexes what level 2 wrote beyond it, found through
//   messages_event_xid (a post's own transaction id, migration 080;
//   services/core/search/search.store.ts indexUnsearched). Rows already here
//   are indexed below, so it starts at this transaction's horizon.
// - messages_workspace_seq (024) goes: only search walked it, and search now
//   walks message_search_workspace_seq. One index fewer on every post.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION axid_search_vector(content text) RETURNS tsvector
      LANGUAGE sql IMMUTABLE PARALLEL SAFE
      AS $$ SELECT to_tsvector('english', content) || to_tsvector('simple', content) $$;

    CREATE TABLE message_search (
      message_id uuid PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
      workspace_id uuid NOT NULL,
      channel_id uuid NOT NULL,
      seq bigint NOT NULL,
      words tsvector NOT NULL
    );
    INSERT INTO message_search (message_id, workspace_id, channel_id, seq, words)
      SELECT id, workspace_id, channel_id, seq, search FROM messages;
    CREATE INDEX message_search_words ON message_search USING gin (words);
    CREATE INDEX message_search_workspace_seq ON message_search (workspace_id, seq DESC);
    -- migration 025's reason: rare words need a long most-common list
    ALTER TABLE message_search ALTER COLUMN words SET STATISTICS 2000;

    DROP INDEX messages_search;
    DROP INDEX messages_workspace_seq;
    ALTER TABLE messages DROP COLUMN search;

    CREATE FUNCTION axid_reindex_message() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE message_search SET words = axid_search_vector(NEW.content) WHERE message_id = NEW.id;
      RETURN NULL;
    END $$;
    CREATE TRIGGER messages_reindex AFTER UPDATE OF content ON messages
      FOR EACH ROW WHEN (OLD.content IS DISTINCT FROM NEW.content)
      EXECUTE FUNCTION axid_reindex_message();

    CREATE TABLE search_backfill (
      id integer PRIMARY KEY CHECK (id = 1),
      -- every transaction below it had ended when the backfill last looked
      through_xid xid8 NOT NULL
    );
    INSERT INTO search_backfill (id, through_xid) SELECT 1, pg_snapshot_xmin(pg_current_snapshot());
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE IF EXISTS search_backfill;
    DROP TRIGGER IF EXISTS messages_reindex ON messages;
    DROP FUNCTION IF EXISTS axid_reindex_message();
    ALTER TABLE messages ADD COLUMN search tsvector
      GENERATED ALWAYS AS (to_tsvector('english', content) || to_tsvector('simple', content)) STORED;
    ALTER TABLE messages ALTER COLUMN search SET STATISTICS 2000;
    CREATE INDEX messages_search ON messages USING gin (search);
    CREATE INDEX messages_workspace_seq ON messages (workspace_id, seq DESC);
    DROP TABLE IF EXISTS message_search;
    DROP FUNCTION IF EXISTS axid_search_vector(text);
  `);
}
