// The relay's read side: which committed events come next, by a commit-safe
// cursor (docs/architecture.md, "The path of an event").
//
// Every event row carries the id of the transaction that wrote it (xid8): an
// outbox row (shared/events.ts recordEvents) in `outbox.xid`, and a posted
// message, which is its own message.created event, in `messages.event_xid`
// (the event source given by services/core, messages.store.ts). The relay's
// position is a pair of snapshots: `done`, up to which every event is
// published, and the snapshot it reads now. Each read returns the rows of the
// transactions visible now and not in `done` — those that committed since —
// however long they ran: a transaction that commits long after later ones is
// read when it commits, never skipped, and none waits for it. Events of one
// read come in the order they were written (one sequence, event_seq, numbers
// outbox rows and messages): a change made after another committed is
// written after it, so it is published after it.
//
// Nothing is deleted per event. The position is recorded in relay_cursor
// (with a later read, at most every RECORD_MS) and outbox rows older than the
// recorded `done` are deleted then, in bulk; messages stay what they are.
// A relay that dies before recording makes its successor read again what it
// published since: the stream's entries carry the event ids, and the relay
// skips the ones the stream has (outbox-relay.ts).

/** A committed event as the relay publishes it: `id` is its place in event_seq, `event` the JSON as published. */
export interface OutboxRow {
  id: number;
  type: string;
  event: string;
  /** The channel the event is about (shared/event-bus.ts channelOf: the shard is picked by it). */
  channelId: string | null;
  /** The trace context of the change that wrote it (shared/tracing.ts), when it was traced. */
  trace?: string | null;
}

/** `name`: run as a prepared statement where the connection allows. */
type Query = <R>(sql: string, params: unknown[], name?: string) => Promise<R[]>;

/**
 * The read window, "written by a transaction that committed after `w.done`
 * and is visible in `w.target`", for a source's xid8 column, in two halves,
 * each read apart (UNION ALL) so that each is an index range or probe on the
 * column: transactions that had not started at `done` (xid at or past its
 * xmax, below `target`'s), and those running then (in its list). The halves
 * never overlap: a running xid is below its snapshot's xmax. Not "xid at or
 * past done's xmin": xids are the cluster's, so any long transaction, in any
 * database of the server, would hold that bound back and make every read
 * scan everything written since it began.
 *
 * Why two halves and a closed range: the read is prepared once per
 * connection, often on a small table. With an open range (`>= done_xmax`)
 * the plan it kept read every row of messages_event_xid, or the whole table,
 * on each read once messages had grown (82 ms a read at 400,000 rows); with
 * the halves joined by OR the planner could use neither as an index
 * condition and filtered every entry of messages_event_xid on each read (10
 * to 40 ms a read after a few minutes of the loadtest, most of PostgreSQL's
 * CPU: docs/bench.md). Each half alone is an index range or probe, statistics
 * or not (test/api/relay-read-plan.test.ts).
 */
export type ReadWindow = (xidColumn: string) => string;
// The bounds as values computed once (InitPlans), which an index condition always takes; as join columns the planner filtered instead.
const STARTED_SINCE_DONE: ReadWindow = (x) =>
  `${x} >= (SELECT done_xmax FROM w) AND ${x} < (SELECT target_xmax FROM w) AND pg_visible_in_snapshot(${x}, w.target)`;
const RUNNING_AT_DONE: ReadWindow = (x) => `${x} = ANY (w.done_xip) AND pg_visible_in_snapshot(${x}, w.target)`;

/** Outbox rows of transactions visible in `snapshot` (published when it is the recorded `done`). */
const PUBLISHED_AT = (snapshot: string) =>
  `xid < pg_snapshot_xmax(${snapshot}) AND NOT (xid = ANY (ARRAY(SELECT pg_snapshot_xip(${snapshot}))))`;

/**
 * A table whose rows are events: given a half of the read window, SQL
 * selecting `id` (from event_seq), `type`, `event` (JSON text), `channel_id`
 * (text, the shard's key) and `trace` (the row's trace_context) from its rows
 * in it, `FROM <table>, w WHERE ${inWindow('<xid column>')} AND <id> > w.after`.
 */
export type EventSource = (inWindow: ReadWindow) => string;

/** The outbox's rows: an event source as any other. */
const OUTBOX_EVENTS: EventSource = (inWindow) => `
      SELECT o.id, o.event->>'type' AS type, o.event::text AS event,
             COALESCE(o.event->'to'->>'channel_id', o.event->'data'->'conversation'->>'id') AS channel_id, o.trace_context AS trace
        FROM outbox o, w WHERE ${inWindow('o.xid')} AND o.id > w.after`;

interface Position {
  done: string;
  /** The snapshot of a read cut by its limit: the next reads finish it. */
  target: string | null;
  /** The last id read of `target`. */
  after: string;
}

export interface OutboxTable {
  /**
   * The next `limit` events, in order. `published`: the events the previous
   * call returned are on the stream (their position moves on); otherwise they
   * are read again. `record`: the position of what is published is written
   * to the database in the same statement.
   */
  next(o: { published: boolean; record: boolean; limit: number }): Promise<OutboxRow[]>;
  /** Records the position of what is published (`published`: the events the last call returned are too), if not recorded yet. */
  record(published: boolean): Promise<void>;
  /** Whether the position of published events is not recorded yet. */
  readonly unrecorded: boolean;
  /** Forgets the position in memory: the next read starts at the recorded one (after an election). */
  reset(): void;
}

export function outboxTable(query: Query, sources: EventSource[] = []): OutboxTable {
  /** Published up to here; null: take the recorded position. */
  let published: Position | null = null;
  /** Where the last read ended (published once the relay says so). */
  let read: Position | null = null;
  let recorded = true;

  const statement = `
    WITH rec AS (
      UPDATE relay_cursor SET done = $1::text::pg_snapshot, target = $2::text::pg_snapshot, after = $3::bigint WHERE $4::boolean AND $1::text IS NOT NULL
    ), gc AS (
      DELETE FROM outbox WHERE $4::boolean AND $1::text IS NOT NULL AND ${PUBLISHED_AT('$1::text::pg_snapshot')}
    ), w AS (
      -- One row: LIMIT 1 tells the planner, which has no statistics of relay_cursor where nothing analyzes it.
      SELECT p.done, pg_snapshot_xmax(p.done) AS done_xmax, ARRAY(SELECT pg_snapshot_xip(p.done)) AS done_xip,
             coalesce(p.target, pg_current_snapshot()) AS target, pg_snapshot_xmax(coalesce(p.target, pg_current_snapshot())) AS target_xmax, p.after
        FROM (SELECT $1::text::pg_snapshot AS done, $2::text::pg_snapshot AS target, $3::bigint AS after WHERE $1::text IS NOT NULL
              UNION ALL
              SELECT done, target, after FROM relay_cursor WHERE $1::text IS NULL) p
       LIMIT 1
    ), e AS (
      ${[OUTBOX_EVENTS, ...sources].flatMap((source) => [source(STARTED_SINCE_DONE), source(RUNNING_AT_DONE)]).join('\n      UNION ALL')}
      ORDER BY id LIMIT $5
    )
    SELECT w.done::text AS done, w.target::text AS target, e.id, e.type, e.event, e.channel_id, e.trace FROM w LEFT JOIN e ON true ORDER BY e.id`;

  async function run(record: boolean, limit: number): Promise<OutboxRow[]> {
    const from = published;
    const rows = await query<{ done: string; target: string; id: string | null; type: string; event: string; channel_id: string | null; trace: string | null }>(statement, [
      from?.done ?? null,
      from?.target ?? null,
      from?.after ?? '0',
      record && !recorded,
      limit,
    ], 'axid_relay_read');
    if (record) recorded = true;
    const head = rows[0];
    if (!head) throw new Error('relay_cursor has no row');
    const events = rows.filter((r) => r.id !== null).map((r) => ({ id: Number(r.id), type: r.type, event: r.event, channelId: r.channel_id, trace: r.trace }));
    // A full read leaves the rest of its snapshot for the next ones.
    read =
      events.length < limit
        ? { done: head.target, target: null, after: '0' }
        : { done: head.done, target: head.target, after: String(events[events.length - 1]!.id) };
    // Nothing to publish: the position moves on at once (recording it can
    // wait: reading from the recorded one would find nothing more).
    if (events.length === 0) advance(false);
    return events;
  }

  function advance(changed: boolean) {
    if (!read) return;
    published = read;
    read = null;
    if (changed) recorded = false;
  }

  return {
    async next({ published: wasPublished, record, limit }) {
      if (wasPublished) advance(true);
      return run(record, limit);
    },
    get unrecorded() {
      return !recorded || read !== null;
    },
    async record(wasPublished) {
      if (wasPublished) advance(true);
      if (recorded || !published) return;
      const p = published;
      await query(
        `WITH rec AS (UPDATE relay_cursor SET done = $1::text::pg_snapshot, target = $2::text::pg_snapshot, after = $3::bigint)
         DELETE FROM outbox WHERE ${PUBLISHED_AT('$1::text::pg_snapshot')}`,
        [p.done, p.target, p.after],
        'axid_relay_record',
      );
      if (published === p) recorded = true;
    },
    reset() {
      published = null;
      read = null;
      recorded = true;
    },
  };
}
