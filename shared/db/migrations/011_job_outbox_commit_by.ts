import type { Knex } from 'knex';

// The commit deadline of migration 010 on recorded jobs too: a write that
// records a job and no event (an upload) is refused past the time its client
// gave up, like one that records an event.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE job_outbox ADD COLUMN commit_by timestamptz;
    CREATE CONSTRAINT TRIGGER job_outbox_commit_by AFTER INSERT ON job_outbox
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.commit_by IS NOT NULL)
      EXECUTE FUNCTION axid_refuse_late_commit();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER IF EXISTS job_outbox_commit_by ON job_outbox;
    ALTER TABLE job_outbox DROP COLUMN IF EXISTS commit_by;
  `);
}
