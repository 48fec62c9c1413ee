import type { Knex } from 'knex';

// Jobs for the worker, recorded in the transaction of the change they work on
// and moved to the BullMQ queue by the job publisher (shared/job-outbox.ts):
// a request never waits for Redis to hand a job over, and a job is never lost
// to a Redis outage between the commit and the enqueue.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE job_outbox (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      name text NOT NULL,
      payload jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS job_outbox');
}
