// Idempotent posting (level 3, contract §9; docs/feature-levels.md). A create
// request with `Idempotency-Key` runs inside one transaction that also keeps
// the key and its answer, so the answer exists exactly when what the request
// created does: a process killed after the commit and before answering leaves
// an answer the retry replays, never a second message. Concurrent requests
// with one key are told apart by a transaction-level advisory lock: the
// second is refused at once (409) instead of waiting for the first.
import { createHash } from 'node:crypto';
import stableStringify from 'safe-stable-stringify';
import type { Knex } from '../db/knex.js';
import { AppError, invalid } from '../errors.js';
import type { LevelSpan } from '../feature-level.js';
import type { Runtime } from '../runtime.js';

/** The feature levels the header is honoured at (below, it is ignored as any unknown header). */
export const IDEMPOTENCY: LevelSpan = { since: 3 };
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';
/** How long a key and its answer are kept. */
export const IDEMPOTENCY_TTL_HOURS = 24;
/** 1 to 255 printable ASCII characters. */
const KEY = /^[\x20-\x7e]{1,255}$/;

/** An answer as sent: status and the JSON text of its body. */
export interface Answer {
  status: number;
  body: string;
}

export function checkKey(key: string): string {
  if (!KEY.test(key)) throw invalid(`${IDEMPOTENCY_HEADER}: must be 1 to 255 printable ASCII characters`);
  return key;
}

/**
 * What a key's first request was: its method, path and parsed body, as
 * canonical JSON (keys sorted at every level), so the same body sent with its
 * keys in another order or other white space is the same request.
 */
export const fingerprintOf = (method: string, path: string, body: unknown) =>
  createHash('sha256').update(stableStringify([method, path, body ?? null])!).digest('hex');

/** A 64-bit advisory lock id for a caller's key (a collision only refuses a request with 409). */
const lockIdOf = (caller: string, key: string) => BigInt.asIntN(64, BigInt(`0x${createHash('sha256').update(`${caller}\n${key}`).digest('hex').slice(0, 16)}`)).toString();

/**
 * Runs `create` once per caller and key: with the runtime's database replaced
 * by one transaction, which commits the key and the answer with whatever
 * `create` wrote. A key seen within 24 h answers as the first time
 * (`replayed`), or 422 if the request differs; a key whose first request is
 * still running answers 409. A request that fails keeps nothing: it may be
 * retried with the same key.
 */
export async function runIdempotent(
  rt: Runtime,
  o: { caller: string; key: string; fingerprint: string },
  create: (rt: Runtime) => Promise<Answer>,
): Promise<Answer & { replayed: boolean }> {
  const answer = await rt.db.transaction(async (trx) => {
    const { rows } = await trx.raw<{ rows: { locked: boolean }[] }>('SELECT pg_try_advisory_xact_lock(?::bigint) AS locked', [lockIdOf(o.caller, o.key)]);
    if (!rows[0]!.locked) throw new AppError('idempotency_in_progress', `a request with this ${IDEMPOTENCY_HEADER} is still in progress: retry once it has answered`);
    const first = (await trx('idempotency_keys')
      .where({ caller: o.caller, key: o.key })
      .where('created_at', '>', trx.raw(`now() - interval '${IDEMPOTENCY_TTL_HOURS} hours'`))
      .first('fingerprint', 'status', 'body')) as { fingerprint: string; status: number; body: string } | undefined;
    if (first) {
      if (first.fingerprint !== o.fingerprint) {
        throw new AppError('idempotency_key_reused', `this ${IDEMPOTENCY_HEADER} was used for a different request in the last ${IDEMPOTENCY_TTL_HOURS} hours: use a new key`);
      }
      return { status: first.status, body: first.body, replayed: true };
    }
    const created = await create({ ...rt, db: trx as unknown as Knex });
    // An expired key not swept yet is replaced.
    await trx('idempotency_keys')
      .insert({ caller: o.caller, key: o.key, fingerprint: o.fingerprint, status: created.status, body: created.body, created_at: trx.fn.now() })
      .onConflict(['caller', 'key'])
      .merge();
    return { ...created, replayed: false };
  });
  if (!answer.replayed) {
    // Writes inside the transaction told the relay and the job publisher at their savepoint: tell them of the commit.
    rt.events.committed([]);
    rt.jobs.recorded();
    // Test-only (TEST_FAULT): the process dies between the commit and the answer.
    if (rt.config.testFault === 'crash-after-idempotent-commit') process.kill(process.pid, 'SIGKILL');
  }
  return answer;
}

/** Deletes keys older than 24 h, a batch at a time (the worker's repeating job); returns how many. */
export async function sweepIdempotencyKeys(rt: Runtime): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await rt.db.raw<{ rowCount: number }>(
      `DELETE FROM idempotency_keys WHERE ctid IN (
         SELECT ctid FROM idempotency_keys WHERE created_at < now() - interval '${IDEMPOTENCY_TTL_HOURS} hours' ORDER BY created_at LIMIT 5000)`,
    );
    total += deleted.rowCount;
    if (deleted.rowCount < 5000) return total;
  }
}
