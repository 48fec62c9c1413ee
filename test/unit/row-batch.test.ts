// RowBatch (shared/db/row-batch.ts) with writers that record what they are
// asked to write: which rows go together, in what order, how many statements
// run at once, and who gets which outcome. test/api/post-batch.test.ts runs
// the posts' batch against PostgreSQL.
import { expect } from 'chai';
import type { Knex } from 'knex';
import { RowBatch } from '../../shared/db/row-batch.js';

const db = {} as Knex;

/** Writers that hold each statement until released, and record every call. */
function recorder(o: { failMany?: (rows: number[]) => unknown; failOne?: (row: number) => unknown } = {}) {
  const calls: { kind: 'many' | 'one'; rows: number[] }[] = [];
  const held: (() => void)[] = [];
  let running = 0;
  let mostAtOnce = 0;
  const statement = async (kind: 'many' | 'one', rows: number[], fail: unknown) => {
    calls.push({ kind, rows });
    running++;
    mostAtOnce = Math.max(mostAtOnce, running);
    await new Promise<void>((resolve) => held.push(resolve));
    running--;
    if (fail) throw fail;
  };
  const writers = {
    many: (_: Knex, rows: number[]) => statement('many', rows, o.failMany?.(rows)),
    one: (_: Knex, row: number) => statement('one', [row], o.failOne?.(row)),
  };
  return {
    calls,
    batch: new RowBatch<number>(db, writers),
    get mostAtOnce() {
      return mostAtOnce;
    },
    /** Lets every statement asked for so far finish, until none is left. */
    async releaseAll() {
      for (;;) {
        await new Promise((resolve) => setImmediate(resolve));
        if (held.length === 0) return;
        held.splice(0).forEach((release) => release());
      }
    },
  };
}

const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);

describe('RowBatch', () => {
  it('writes the rows of one turn in one statement, in order, and a lone row with the single-row writer', async () => {
    const r = recorder();
    const together = Promise.all(range(0, 5).map((n) => r.batch.add(n)));
    await r.releaseAll();
    await together;
    const alone = r.batch.add(99);
    await r.releaseAll();
    await alone;
    expect(r.calls).to.deep.equal([
      { kind: 'many', rows: [0, 1, 2, 3, 4] },
      { kind: 'one', rows: [99] },
    ]);
  });

  it('runs two statements at most; rows added meanwhile wait and go together into the next', async () => {
    const r = recorder();
    const first = r.batch.add(1);
    await new Promise((resolve) => setImmediate(resolve)); // the first statement is running
    const second = r.batch.add(2);
    await new Promise((resolve) => setImmediate(resolve)); // the second too
    const waiting = range(10, 4).map((n) => r.batch.add(n));
    await new Promise((resolve) => setImmediate(resolve));
    expect(r.calls).to.have.length(2);
    await r.releaseAll();
    await Promise.all([first, second, ...waiting]);
    expect(r.calls.map((c) => c.rows)).to.deep.equal([[1], [2], [10, 11, 12, 13]]);
    expect(r.mostAtOnce).to.equal(2);
  });

  it('writes a backlog in statements of 256 rows at most, in order, every row once', async () => {
    const r = recorder();
    const all = Promise.all(range(0, 600).map((n) => r.batch.add(n)));
    await r.releaseAll();
    await all;
    expect(r.calls.map((c) => c.rows.length)).to.deep.equal([256, 256, 88]);
    expect(r.calls.flatMap((c) => c.rows)).to.deep.equal(range(0, 600));
    expect(r.mostAtOnce).to.equal(2);
  });

  it('after a statement refused for its rows, writes each row again alone, in order: only the bad row fails', async () => {
    const refused = Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' });
    const r = recorder({ failMany: () => refused, failOne: (row) => (row === 2 ? refused : undefined) });
    const outcomes = Promise.allSettled(range(0, 5).map((n) => r.batch.add(n)));
    await r.releaseAll();
    expect((await outcomes).map((o) => o.status)).to.deep.equal(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect(r.calls).to.deep.equal([{ kind: 'many', rows: [0, 1, 2, 3, 4] }, ...range(0, 5).map((n) => ({ kind: 'one', rows: [n] }))]);
  });

  for (const [what, err] of [
    ['a refused connection', Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })],
    ['a statement timeout', Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' })],
    ['a lock timeout', Object.assign(new Error('canceling statement due to lock timeout'), { code: '55P03' })],
    ["the client's own bound", new Error('Query read timeout')],
  ] as const) {
    it(`fails every row of the statement with ${what}, and writes none again`, async () => {
      const r = recorder({ failMany: () => err });
      const outcomes = Promise.allSettled(range(0, 4).map((n) => r.batch.add(n)));
      await r.releaseAll();
      for (const o of await outcomes) expect(o).to.deep.equal({ status: 'rejected', reason: err });
      expect(r.calls).to.deep.equal([{ kind: 'many', rows: [0, 1, 2, 3] }]);
    });
  }
});
