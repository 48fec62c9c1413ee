import pg from 'pg';

/**
 * The SQL texts the driver sends while `fn` runs, counted at pg.Client (the
 * hot paths use named prepared statements, past knex's query events). The
 * outbox relay's own queries are left out.
 */
export async function driverQueries(fn: () => Promise<unknown>, o: { carrying?: string } = {}): Promise<string[]> {
  const seen: string[] = [];
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const q = args[0] as string | { text: string; values?: unknown[] };
    const text = typeof q === 'string' ? q : q.text;
    // `carrying`: only the queries given this value (the stack's background work runs meanwhile).
    const values = (typeof q === 'string' ? args[1] : (q.values ?? args[1])) as unknown[] | undefined;
    const wanted = o.carrying === undefined || (Array.isArray(values) && values.includes(o.carrying));
    if (wanted && !/FROM outbox WHERE NOT|DELETE FROM outbox/.test(text)) seen.push(text);
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  try {
    await fn();
  } finally {
    pg.Client.prototype.query = original;
  }
  return seen;
}
