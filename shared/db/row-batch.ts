// Rows that arrive together are written by one statement (group commit done
// by the writer). A busy API receives many posts at once; written one
// statement each, every post paid a round trip, a commit and its WAL flush,
// and a wake-up of a Postgres backend, which on the VMs this runs on costs the
// waker tens of microseconds. Written together, N posts pay those once
// (docs/bench.md, "Posts: one statement for the posts that arrive together").
//
// A caller's promise settles when its row is committed or refused, as if it
// had been written alone:
// - rows added in one event-loop turn, and while MAX_IN_FLIGHT statements
//   run, go into the next statement; a lone row (low load) waits one turn
//   and is written by the single-row statement;
// - if that statement fails for a reason of its own rows (not a dependency
//   away), each row is written again alone, in order, so one bad row fails
//   only its own caller;
// - if the database is away or too slow, every caller of the statement gets
//   that error (a 503: shared/errors.ts), as each would have alone.
import type { Knex } from 'knex';
import { isDependencyUnavailable } from '../errors.js';

/** Statements of one batcher running at once: one commits while the next fills. */
const MAX_IN_FLIGHT = 2;
/** Rows per statement at most (a backlog is written in several). */
const MAX_ROWS = 256;

interface Waiting<Row> {
  row: Row;
  resolve(): void;
  reject(err: unknown): void;
}

export interface RowWriters<Row> {
  /** Writes all of `rows` in one statement, or none of them (throws). */
  many(db: Knex, rows: Row[]): Promise<void>;
  /** Writes one row alone: a lone row, or each row again after `many` failed for a reason of its rows. */
  one(db: Knex, row: Row): Promise<void>;
}

export class RowBatch<Row> {
  private waiting: Waiting<Row>[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly db: Knex,
    private readonly write: RowWriters<Row>,
  ) {}

  /** Resolves once `row` is committed; rejects with the error that refused it. */
  add(row: Row): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ row, resolve, reject });
      if (this.scheduled || this.inFlight >= MAX_IN_FLIGHT) return;
      this.scheduled = true;
      // The rows of this turn go together.
      setImmediate(() => {
        this.scheduled = false;
        this.flush();
      });
    });
  }

  private flush(): void {
    // A backlog longer than MAX_ROWS fills every free slot.
    while (this.inFlight < MAX_IN_FLIGHT && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, MAX_ROWS);
      this.inFlight++;
      void this.run(batch).finally(() => {
        this.inFlight--;
        this.flush();
      });
    }
  }

  private async run(batch: Waiting<Row>[]): Promise<void> {
    if (batch.length === 1) {
      await this.write.one(this.db, batch[0]!.row).then(batch[0]!.resolve, batch[0]!.reject);
      return;
    }
    try {
      await this.write.many(
        this.db,
        batch.map((w) => w.row),
      );
      for (const w of batch) w.resolve();
    } catch (err) {
      if (isDependencyUnavailable(err)) {
        for (const w of batch) w.reject(err);
        return;
      }
      // Nothing of the statement was written: each row again, alone, in the order they came.
      for (const w of batch) await this.write.one(this.db, w.row).then(w.resolve, w.reject);
    }
  }
}

/** One batch per pool and kind of row: `make` builds it on a pool's first row. */
export function batchesPerPool<Row>(make: (db: Knex) => RowBatch<Row>): (db: Knex) => RowBatch<Row> {
  const batches = new WeakMap<Knex, RowBatch<Row>>();
  return (db) => {
    let batch = batches.get(db);
    if (!batch) batches.set(db, (batch = make(db)));
    return batch;
  };
}
