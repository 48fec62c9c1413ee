// Migration 070: the outboxes are queues (every row inserted, relayed and
// deleted), vacuumed after a fixed count of dead rows and unthrottled
// (docs/scaling.md, "Growth").
import { expect } from 'chai';
import { stack } from '../support/stack.js';

describe('outbox autovacuum settings', () => {
  it('vacuums outbox and job_outbox after 10,000 dead rows, unthrottled, never for inserts', async () => {
    const { rows } = await stack().rt.db.raw<{ rows: { relname: string; reloptions: string[] }[] }>(
      `SELECT relname, reloptions FROM pg_class WHERE relname IN ('outbox', 'job_outbox') AND relkind = 'r' ORDER BY relname`,
    );
    expect(rows.map((r) => r.relname)).to.deep.equal(['job_outbox', 'outbox']);
    for (const r of rows) {
      expect(r.reloptions).to.have.members([
        'autovacuum_vacuum_scale_factor=0',
        'autovacuum_vacuum_threshold=10000',
        'autovacuum_vacuum_cost_delay=0',
        'autovacuum_vacuum_insert_threshold=-1',
      ]);
    }
  });
});
