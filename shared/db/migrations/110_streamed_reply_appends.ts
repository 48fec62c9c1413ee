import type { Knex } from 'knex';

// Appends to a streamed reply cost what the append is, not what the reply is
// (docs/security.md, "One user's slow input"):
// - `stream_settled`: how much of a streaming reply's content no later append
//   can change the reading of (it ends where the last top-level block or list
//   item starts); an append sanitizes only what follows it, with the delta
//   (services/core/messages/messages.service.ts, appendToMessage). Null once
//   finished, and for every other message.
// - the search words of a reply are written once, when it stops streaming,
//   not again on every append (each re-index read the whole content twice,
//   english and simple, inside the append's transaction).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE messages ADD COLUMN stream_settled integer;
    DROP TRIGGER messages_reindex ON messages;
    CREATE TRIGGER messages_reindex AFTER UPDATE OF content, streaming ON messages
      FOR EACH ROW WHEN ((OLD.content IS DISTINCT FROM NEW.content OR OLD.streaming) AND NOT NEW.streaming)
      EXECUTE FUNCTION axid_reindex_message();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER IF EXISTS messages_reindex ON messages;
    CREATE TRIGGER messages_reindex AFTER UPDATE OF content ON messages
      FOR EACH ROW WHEN (OLD.content IS DISTINCT FROM NEW.content)
      EXECUTE FUNCTION axid_reindex_message();
    ALTER TABLE messages DROP COLUMN IF EXISTS stream_settled;
  `);
}
