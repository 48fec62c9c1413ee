import type { Knex } from 'knex';

// A write that records an event carries the time its client gives up on it
// (outbox.commit_by, shared/db/knex.ts `commitDeadline`), and Postgres refuses
// to commit it later: a server paused or stuck past that time rolls the write
// back when it resumes, so a request that answered 503 never commits after
// (docs/reliability.md, "A hung dependency"). A deferred constraint trigger
// runs at commit (at the end of the statement outside a transaction block).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE outbox ADD COLUMN commit_by timestamptz;
    CREATE FUNCTION axid_refuse_late_commit() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF clock_timestamp() > NEW.commit_by THEN
        RAISE EXCEPTION 'the client gave up on this write before it could commit' USING ERRCODE = '57014';
      END IF;
      RETURN NULL;
    END $$;
    CREATE CONSTRAINT TRIGGER outbox_commit_by AFTER INSERT ON outbox
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.commit_by IS NOT NULL)
      EXECUTE FUNCTION axid_refuse_late_commit();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER IF EXISTS outbox_commit_by ON outbox;
    DROP FUNCTION IF EXISTS axid_refuse_late_commit();
    ALTER TABLE outbox DROP COLUMN IF EXISTS commit_by;
  `);
}
