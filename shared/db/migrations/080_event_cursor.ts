import type { Knex } from 'knex';

// Events read by a commit-safe cursor instead of a queue of rows to delete
// (docs/architecture.md, "The path of an event"; shared/relay/outbox-table.ts):
// - a posted message is its own message.created event: messages.event_xid is
//   the id of the transaction that wrote it (NULL for rows written otherwise,
//   such as seeds, which publish nothing); no outbox row, no delete;
// - every other event keeps its outbox row, which now carries its writing
//   transaction's id too (xid), and is deleted in bulk once the relay's
//   recorded position is past it;
// - messages and outbox rows take their ids from one sequence (event_seq), so
//   that events of both that became visible together are published in the
//   order they were written;
// - relay_cursor holds the relay's position: the snapshot up to which
//   everything is published (done), the snapshot being read when a read was
//   cut by its limit (target), and the last id read of it (after).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE SEQUENCE event_seq;
    SELECT setval('event_seq', greatest((SELECT max(seq) FROM messages), (SELECT max(id) FROM outbox), 0) + 1);
    ALTER TABLE messages ALTER COLUMN seq DROP IDENTITY;
    ALTER TABLE messages ALTER COLUMN seq SET DEFAULT nextval('event_seq');
    ALTER TABLE outbox ALTER COLUMN id DROP IDENTITY;
    ALTER TABLE outbox ALTER COLUMN id SET DEFAULT nextval('event_seq');
    ALTER SEQUENCE event_seq OWNED BY messages.seq;

    ALTER TABLE messages ADD COLUMN event_xid xid8, ADD COLUMN commit_by timestamptz;
    CREATE CONSTRAINT TRIGGER messages_commit_by AFTER INSERT ON messages
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.commit_by IS NOT NULL)
      EXECUTE FUNCTION axid_refuse_late_commit();
    CREATE INDEX messages_event_xid ON messages (event_xid) WHERE event_xid IS NOT NULL;
    -- Rows already waiting get this transaction's id: the position below leaves it unpublished.
    ALTER TABLE outbox ADD COLUMN xid xid8 NOT NULL DEFAULT pg_current_xact_id();
    CREATE INDEX outbox_xid ON outbox (xid);

    CREATE TABLE relay_cursor (
      id integer PRIMARY KEY CHECK (id = 1),
      done pg_snapshot NOT NULL,
      target pg_snapshot,
      after bigint NOT NULL DEFAULT 0
    );
    -- Everything committed before now is published, except the rows of this
    -- transaction and of the ones still running (they are in the list).
    INSERT INTO relay_cursor (id, done)
    SELECT 1, (least(pg_snapshot_xmin(s)::text::bigint, x)::text || ':' || greatest(pg_snapshot_xmax(s)::text::bigint, x + 1)::text || ':' ||
               (SELECT string_agg(v::text, ',' ORDER BY v) FROM (SELECT pg_snapshot_xip(s)::text::bigint AS v UNION SELECT x) u))::pg_snapshot
      FROM (SELECT pg_current_snapshot() AS s, pg_current_xact_id()::text::bigint AS x) q;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE IF EXISTS relay_cursor;
    DROP INDEX IF EXISTS outbox_xid;
    ALTER TABLE outbox DROP COLUMN IF EXISTS xid;
    DROP INDEX IF EXISTS messages_event_xid;
    DROP TRIGGER IF EXISTS messages_commit_by ON messages;
    ALTER TABLE messages DROP COLUMN IF EXISTS event_xid, DROP COLUMN IF EXISTS commit_by;
    ALTER TABLE outbox ALTER COLUMN id DROP DEFAULT;
    ALTER TABLE outbox ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY;
    SELECT setval(pg_get_serial_sequence('outbox', 'id'), coalesce((SELECT max(id) FROM outbox), 0) + 1);
    ALTER SEQUENCE event_seq OWNED BY NONE;
    ALTER TABLE messages ALTER COLUMN seq DROP DEFAULT;
    ALTER TABLE messages ALTER COLUMN seq ADD GENERATED ALWAYS AS IDENTITY;
    SELECT setval(pg_get_serial_sequence('messages', 'seq'), coalesce((SELECT max(seq) FROM messages), 0) + 1);
    DROP SEQUENCE event_seq;
  `);
}
