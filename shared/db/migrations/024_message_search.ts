import type { Knex } from 'knex';

// Search (level 3): a generated tsvector of each message's content, in two
// dictionaries: `english` (stems, drops stop words: "deploys" finds "deploy")
// and `simple` (every word as written, so code words, identifiers and stop
// words are found too). A GIN index finds rare words; messages_workspace_seq
// walks a workspace newest first, so a common word stops after a page
// (docs/decisions.md, "Search").
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE messages ADD COLUMN search tsvector
      GENERATED ALWAYS AS (to_tsvector('english', content) || to_tsvector('simple', content)) STORED;
    CREATE INDEX messages_search ON messages USING gin (search);
    CREATE INDEX messages_workspace_seq ON messages (workspace_id, seq DESC);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS messages_workspace_seq; DROP INDEX IF EXISTS messages_search; ALTER TABLE messages DROP COLUMN IF EXISTS search');
}
