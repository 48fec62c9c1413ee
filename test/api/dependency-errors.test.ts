// A database that does not answer is a 503, whatever wraps the driver's
// error: knex puts the statement before node-postgres's message
// (`BEGIN; - Query read timeout`), which was a 500 under a paused
// PostgreSQL (npm run chaos). Real errors from knex on the shared server.
import { expect } from 'chai';
import knexFactory from 'knex';
import { isDependencyUnavailable } from '../../shared/errors.js';
import { QUERY_TIMEOUT_MESSAGE } from '../../shared/db/knex.js';

describe('dependency errors', () => {
  it("tells a client-side query timeout as knex reports it, in a transaction or not, and not a query's own failure", async () => {
    const db = knexFactory({ client: 'pg', connection: { connectionString: 'postgres://postgres@127.0.0.1:5432/postgres', query_timeout: 50 }, pool: { min: 0, max: 2 } });
    try {
      // First: a timed-out statement leaves its connection busy until the server ends it.
      const ownFault = await db.raw('SELECT 1/0').then(() => null, (err: Error) => err);
      const plain = await db.raw('SELECT pg_sleep(0.5)').then(() => null, (err: Error) => err);
      const inTransaction = await db
        .transaction(async (trx) => {
          await trx.raw('SELECT pg_sleep(0.5)');
        })
        .then(() => null, (err: Error) => err);
      for (const err of [plain, inTransaction]) {
        expect(err?.message).to.match(new RegExp(` - ${QUERY_TIMEOUT_MESSAGE}$`));
        expect(isDependencyUnavailable(err), err?.message).to.equal(true);
      }
      expect(isDependencyUnavailable(ownFault), ownFault?.message).to.equal(false);
    } finally {
      await db.destroy();
    }
  });
});
