import type { Knex } from 'knex';

// The trace context of the change that wrote an event or a job (shared/tracing.ts):
// the W3C traceparent (and tracestate), so the relay's publish and the worker's
// job join the request's trace. NULL unless tracing is on (a nullable column
// without a default: no rewrite, and no byte in a row that leaves it NULL).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE messages ADD COLUMN trace_context text;
    ALTER TABLE outbox ADD COLUMN trace_context text;
    ALTER TABLE job_outbox ADD COLUMN trace_context text;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE messages DROP COLUMN trace_context;
    ALTER TABLE outbox DROP COLUMN trace_context;
    ALTER TABLE job_outbox DROP COLUMN trace_context;
  `);
}
