import { commitDeadline, runPrepared, type Db, type Knex, type PreparedStatement } from '../../../shared/db/knex.js';
import { RowBatch, batchesPerPool, type RowWriters } from '../../../shared/db/row-batch.js';
import type { JsonPage } from '../../../shared/http/envelope.js';
import { existsAt, type FeatureLevel } from '../../../shared/feature-level.js';
import { BOTH_WAYS } from './messages.schemas.js';
import type { EventSource } from '../../../shared/relay/outbox-table.js';
import { tracing } from '../../../shared/tracing.js';
import { messageFieldsAt, type MessageField, type MessageRow, type ReactionSummary } from './messages.presenter.js';
import { CARRIED_FILE_ID, CARRIES_A_FILE } from '../../../shared/db/migrations/120_file_carriers.js';
import { isUuid } from '../../../shared/ids.js';

const MESSAGE_COLUMNS = [
  'm.id',
  'm.seq',
  'm.workspace_id',
  'm.channel_id',
  'm.author_id',
  'm.thread_id',
  'm.content',
  'm.content_json',
  'm.metadata',
  'm.card_origin',
  'm.mentioned_user_ids',
  'm.display',
  'm.webhook_id',
  'm.created_at',
  'm.edited_at',
  'm.streaming',
  'm.mentioned_group_ids',
  'm.pinned_at',
  'm.pinned_by',
  'm.unfurls',
  't.reply_count',
  't.last_reply_at',
];

/** A uuid[] literal; the ids are validated uuids. */
const uuidArray = (ids: string[]) => `{${ids.join(',')}}`;
const json = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));

/** A message about to be inserted: its row without what the database assigns or joins. */
export type NewMessage = Omit<MessageRow, 'seq' | 'edited_at' | 'reply_count' | 'last_reply_at'>;

// A posted message is its own message.created event: event_xid, the id of
// the transaction that wrote it, and the relay reads it once that transaction
// is visible (messageCreatedEvents below, shared/relay/outbox-table.ts).
// A streamed reply (level 3) records its event in the outbox instead, as
// posted: its appends are deltas, and a message.created rendered later from
// the row would already hold them. commit_by: Postgres refuses to commit past
// the time the client gave up (migration 010; the outbox row's otherwise).
const MESSAGE_INSERT_COLUMNS = `id, workspace_id, channel_id, author_id, thread_id, content, content_json, metadata,
                              card_origin, mentioned_user_ids, display, webhook_id, created_at, streaming, streaming_at, event_xid, commit_by`;
/**
 * With tracing on, a traced post's statement also writes its trace context
 * (migration 160): `$16`, or `$17` after a streamed reply's event JSON. A post
 * without one keeps the statement it had.
 */
const TRACED_COLUMNS = `${MESSAGE_INSERT_COLUMNS}, trace_context`;
const traceParam = (ownEvent: boolean) => (ownEvent ? 16 : 17);
/** The inserted values: `$n` of a single post, or column n of a batch's rows (`r.vn`, below). */
const messageInsertValues = (ownEvent: boolean, v: (n: number) => string = (n) => `$${n}`, traced = false) =>
  `${v(1)}::uuid, ${v(2)}::uuid, ${v(3)}::uuid, ${v(4)}::uuid, ${v(5)}::uuid, ${v(6)}, ${v(7)}::json, ${v(8)}::json, ${v(9)}, ${v(10)}::uuid[], ${v(11)}::json, ${v(12)}::text, ${v(13)}::timestamptz,
   ${v(15)}::boolean, CASE WHEN ${v(15)}::boolean THEN ${v(13)}::timestamptz END, ${ownEvent ? `pg_current_xact_id(), ${v(14)}::timestamptz` : 'NULL, NULL'}${traced ? `, ${v(traceParam(ownEvent))}::text` : ''}`;
/** The SQL array type each value of a post is sent in by a batch (one array per value, a row per post). */
const BATCH_ARRAY_TYPES = ['uuid', 'uuid', 'uuid', 'uuid', 'uuid', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'timestamptz', 'timestamptz', 'boolean'];
/** A batch's rows, in the order they were added (seq is taken in that order). */
const TRACED_BATCH_ARRAY_TYPES = [...BATCH_ARRAY_TYPES, 'text'];
const batchRows = (types: string[]) => `unnest(${types.map((type, i) => `$${i + 1}::${type}[]`).join(', ')})
         WITH ORDINALITY AS r(${types.map((_, i) => `v${i + 1}`).join(', ')}, n)`;
/** A streamed reply's event row ($16: the event's JSON). */
const OUTBOX_ROW = 'INSERT INTO outbox (event, commit_by) SELECT $16::jsonb, $14::timestamptz';

// The hot path of posting, sent as named prepared statements: Postgres parses
// and plans each once per connection, and each post sends only its values.
// A top-level post and a reply have a statement each: the reply's thread
// upsert and root update cost a top-level post half of its Postgres time
// even when they touch no row. Where search exists the statement also writes
// the message's words (migration 090); a top-level post without search or an
// outbox row, the common case at level 2, is a bare INSERT.
interface PostShape {
  reply: boolean;
  /**
   * An agent's post under the loop guard (level 3): the row counts the agent
   * messages in a row it ends (agent_chain, from the message before it in its
   * list) and is written only while that count is within the limit ($16, or
   * $17 after a streamed reply's event).
   */
  agent?: boolean;
  /** Top-level posts that arrived together, one array per value (row-batch.ts). */
  batch?: boolean;
  /** The row is its own message.created event (else $16 is the event's outbox JSON). */
  ownEvent: boolean;
  /** Write the message's search words (level 3: services/core/search). */
  search: boolean;
  /** Write its trace context too (tracing on, shared/tracing.ts). */
  traced?: boolean;
}

function postStatement(shape: PostShape): PreparedStatement {
  // An agent's post counts the agents' chain in its own statement (the loop guard); it carries no trace context.
  if (shape.agent) return agentPostStatement(shape);
  const { reply, batch = false, ownEvent, search, traced = false } = shape;
  const name = `axid_insert_${reply ? 'reply' : 'message'}${ownEvent ? '' : '_outbox'}${search ? '_search' : ''}${batch ? '_batch' : ''}${traced ? '_traced' : ''}`;
  const values = batch ? messageInsertValues(ownEvent, (n) => `r.v${n}`, traced) : messageInsertValues(ownEvent, undefined, traced);
  const rows = batch ? `SELECT ${values} FROM ${batchRows(traced ? TRACED_BATCH_ARRAY_TYPES : BATCH_ARRAY_TYPES)} ORDER BY r.n` : `VALUES (${values})`;
  const columns = traced ? TRACED_COLUMNS : MESSAGE_INSERT_COLUMNS;
  if (!reply && ownEvent && !search) return { name, text: `INSERT INTO messages (${columns}) ${rows}` };
  const parts = [
    `m AS (
       INSERT INTO messages (${columns})
       ${reply ? `SELECT ${values} WHERE EXISTS (SELECT 1 FROM messages r WHERE r.id = $5::uuid AND r.channel_id = $3::uuid AND r.thread_id IS NULL)` : rows}
       RETURNING id, workspace_id, channel_id, seq, thread_id, created_at, content
     )`,
  ];
  if (reply) parts.push(...REPLY_PARTS);
  if (search) {
    parts.push(`s AS (
       INSERT INTO message_search (message_id, workspace_id, channel_id, seq, words)
       SELECT id, workspace_id, channel_id, seq, axid_search_vector(content) FROM m
     )`);
  }
  const outboxRow = traced ? `INSERT INTO outbox (event, commit_by, trace_context) SELECT $16::jsonb, $14::timestamptz, $17::text` : OUTBOX_ROW;
  const last = ownEvent ? 'SELECT 1 AS inserted FROM m' : `${outboxRow} FROM m RETURNING 1 AS inserted`;
  return { name, text: `WITH ${parts.join(', ')}
     ${last}` };
}

/** The parts a reply adds to its statement: its thread record and the root's has_replies hint. */
const REPLY_PARTS = [
  `t AS (
       INSERT INTO threads (root_message_id, workspace_id, channel_id, reply_count, last_reply_at)
       SELECT thread_id, workspace_id, channel_id, 1, created_at FROM m
       ON CONFLICT (root_message_id) DO UPDATE
         SET reply_count = threads.reply_count + 1,
             last_reply_at = GREATEST(threads.last_reply_at, EXCLUDED.last_reply_at)
     )`,
  `hint AS (
       UPDATE messages SET has_replies = true WHERE id = (SELECT thread_id FROM m) AND NOT has_replies
     )`,
];

/**
 * An agent's post (level 3), one statement still: `c` counts the agent
 * messages in a row this one would end (the newest message of its list, on
 * the list's own index: one probe), and the insert happens only within the
 * limit. Everyone else's post leaves agent_chain NULL, which starts the
 * count again: a person's post costs nothing more. Two agent posts racing
 * may both read the same predecessor and both pass (the guard is for
 * runaway loops, which post one after another). Answers inserted (0 or 1)
 * and chain (the count), so a refusal tells the limit from a bad thread_id.
 */
function agentPostStatement({ reply, ownEvent, search }: PostShape): PreparedStatement {
  const name = `axid_insert_agent_${reply ? 'reply' : 'message'}${ownEvent ? '' : '_outbox'}${search ? '_search' : ''}`;
  const limit = ownEvent ? '$16' : '$17';
  const previous = reply
    ? 'SELECT p.agent_chain FROM messages p WHERE p.thread_id = $5::uuid ORDER BY p.seq DESC LIMIT 1'
    : 'SELECT p.agent_chain FROM messages p WHERE p.channel_id = $3::uuid AND p.thread_id IS NULL ORDER BY p.seq DESC LIMIT 1';
  const root = reply ? ' AND EXISTS (SELECT 1 FROM messages r WHERE r.id = $5::uuid AND r.channel_id = $3::uuid AND r.thread_id IS NULL)' : '';
  const parts = [
    `c AS (SELECT coalesce((${previous}), 0) + 1 AS n)`,
    `m AS (
       INSERT INTO messages (${MESSAGE_INSERT_COLUMNS}, agent_chain)
       SELECT ${messageInsertValues(ownEvent)}, c.n FROM c WHERE c.n <= ${limit}::int${root}
       RETURNING id, workspace_id, channel_id, seq, thread_id, created_at, content
     )`,
    ...(reply ? REPLY_PARTS : []),
  ];
  if (search) {
    parts.push(`s AS (
       INSERT INTO message_search (message_id, workspace_id, channel_id, seq, words)
       SELECT id, workspace_id, channel_id, seq, axid_search_vector(content) FROM m
     )`);
  }
  if (!ownEvent) parts.push(`o AS (${OUTBOX_ROW} FROM m)`);
  return { name, text: `WITH ${parts.join(', ')}
     SELECT (SELECT count(*) FROM m)::int AS inserted, (SELECT n FROM c)::int AS chain` };
}

const STATEMENTS = new Map<string, PreparedStatement>();
const statementFor = (shape: PostShape) => {
  const key = `${+shape.reply}${+(shape.batch ?? false)}${+shape.ownEvent}${+shape.search}${+(shape.traced ?? false)}${+(shape.agent ?? false)}`;
  let statement = STATEMENTS.get(key);
  if (!statement) STATEMENTS.set(key, (statement = postStatement(shape)));
  return statement;
};

/**
 * Posts a message in ONE statement (one round trip, atomic): the message,
 * which is its own message.created event, or with `eventJson` (a streamed
 * reply) the message and its outbox row; for a reply also its thread record
 * (created by the first reply, counted by the next) and the root's
 * has_replies hint. A reply is inserted only if thread_id names a top-level
 * message of the same channel. Returns false when the reply was refused.
 *
 * Top-level posts outside a transaction, the bulk of a busy workspace's
 * writes, go through the pool's post batch: the posts that arrive together
 * share one statement (shared/db/row-batch.ts), each resolved once committed.
 */
export async function insertMessage(db: Knex, m: NewMessage, eventJson: string | null, search: boolean): Promise<boolean> {
  return (await insertPost(db, m, eventJson, search, null)) === 'inserted';
}

/**
 * insertMessage, with the loop guard for an agent's post when
 * `agentChainLimit` is a number (level 3): 'chain_limit' when the message
 * would be one agent message too many in a row, 'bad_thread' for a reply
 * refused.
 */
export async function insertPost(
  db: Knex,
  m: NewMessage,
  eventJson: string | null,
  search: boolean,
  agentChainLimit: number | null,
): Promise<'inserted' | 'bad_thread' | 'chain_limit'> {
  const values: PostValues = [
    m.id,
    m.workspace_id,
    m.channel_id,
    m.author_id,
    m.thread_id,
    m.content,
    json(m.content_json),
    json(m.metadata),
    m.card_origin,
    uuidArray(m.mentioned_user_ids),
    json(m.display),
    m.webhook_id,
    m.created_at.toISOString(),
    commitDeadline(db),
    m.streaming,
  ];
  const agent = agentChainLimit !== null;
  const traceContext = tracing && !agent ? tracing.active() : undefined;
  if (!agent && eventJson === null && m.thread_id === null && !db.isTransaction) {
    if (traceContext) values.push(traceContext);
    await postBatchOf(db, search, traceContext !== undefined).add(values);
    return 'inserted';
  }
  if (eventJson !== null) values.push(eventJson);
  if (agent) {
    values.push(agentChainLimit);
    const { rows } = await runPrepared<{ inserted: number; chain: number }>(db, statementFor({ reply: m.thread_id !== null, ownEvent: eventJson === null, search, agent }), values);
    if (rows[0]!.inserted === 1) return 'inserted';
    return rows[0]!.chain > agentChainLimit ? 'chain_limit' : 'bad_thread';
  }
  if (traceContext) values.push(traceContext);
  const statement = statementFor({ reply: m.thread_id !== null, ownEvent: eventJson === null, search, traced: traceContext !== undefined });
  // Every other shape's last part counts the message: the INSERT itself, or a row per inserted message.
  const { rowCount } = await runPrepared(db, statement, values);
  return rowCount === 1 ? 'inserted' : 'bad_thread';
}

/** A post's statement values, $1 to $15 (then a streamed reply's event; then an agent's chain limit, or a traced post's trace context). */
type PostValues = (string | boolean | number | null)[];

const postBatches = [false, true].flatMap((traced) =>
  [false, true].map((search) => {
    const single = statementFor({ reply: false, ownEvent: true, search, traced });
    const batch = statementFor({ reply: false, batch: true, ownEvent: true, search, traced });
    const types = traced ? TRACED_BATCH_ARRAY_TYPES : BATCH_ARRAY_TYPES;
    const writers: RowWriters<PostValues> = {
      // One array per value, each row's value at the row's place.
      many: async (pool, rows) => void (await runPrepared(pool, batch, types.map((_, i) => rows.map((row) => row[i])))),
      one: async (pool, row) => void (await runPrepared(pool, single, row)),
    };
    return batchesPerPool<PostValues>((db) => new RowBatch(db, writers));
  }),
);
/** Traced posts (tracing on) share batches of their own. */
const postBatchOf = (db: Knex, search: boolean, traced: boolean) => postBatches[2 * +traced + +search]!(db);

/**
 * A JSON array as text, written as JSON.stringify writes one (json_agg adds
 * spaces), so that a page holds each message byte for byte as messagePresenter
 * gives it. Left as text: a ::json cast would parse the whole page again.
 */
const jsonArray = (element: string, order: string, where?: string) =>
  `coalesce('[' || string_agg(${element}, ',' ORDER BY ${order})${where ? ` FILTER (WHERE ${where})` : ''} || ']', '[]')`;

/** A timestamp as JSON.stringify writes a Date: UTC, milliseconds (truncated, as a Date does). */
const isoTime = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * One field of the Message as JSON text in SQL (`json`), and, for a field
 * most messages leave at one value, that value and the test that says so
 * (`usual`). A message passing every test of its level (no blocks, metadata,
 * thread, reaction, mention, edit, pin or preview: most messages) is written
 * with those values as literals; each field's own expression costs a page
 * about 0.2 µs a row (docs/bench.md, "Where a page's PostgreSQL time goes").
 */
interface FieldSql {
  json: string;
  /** `when` absent: every message has the usual value. */
  usual?: { when?: string; json: string };
}

// Each field's value as JSON text; a NULL is written `null` (one NULL part
// would make the whole message NULL). A uuid or a time needs no escaping.
const uuidJson = (column: string): FieldSql => ({ json: `coalesce('"' || ${column} || '"', 'null')` });
const timeJson = (column: string): FieldSql => ({ json: `coalesce('"' || ${isoTime(column)} || '"', 'null')` });
const valueJson = (value: string): FieldSql => ({ json: `coalesce(to_json(${value})::text, 'null')` });
/** A json column is kept as written: its text is its JSON. */
const jsonColumn = (column: string): FieldSql => ({ json: `coalesce(${column}::text, 'null')` });
/** A column usually NULL, written by `write` otherwise: then `null`. */
const usuallyNull = (write: (column: string) => FieldSql, column: string): FieldSql => ({ ...write(column), usual: { when: `${column} IS NULL`, json: 'null' } });
/** Usually an empty array column: then `[]`. */
const usuallyEmpty = (column: string): FieldSql => ({ ...valueJson(column), usual: { when: `cardinality(${column}) = 0`, json: '[]' } });
/** The same for every message (a message.created event has no thread or reactions yet). */
const always = (json: string): FieldSql => ({ json: `'${json}'`, usual: { json } });

/**
 * How Postgres gives each field of the Message object as JSON text, for
 * history pages: the API process then neither parses 50 rows nor serializes
 * them again (with rows parsed in JS a page cost twice the floor's CPU).
 * Keyed by the one field list (MESSAGE_FIELDS, messages.presenter.ts), whose
 * order is the JSON's; a test holds the bytes equal to messagePresenter's.
 * thread_id has no usual value: a thread page's replies all have one.
 */
const MESSAGE_FIELD_SQL: Record<MessageField, FieldSql> = {
  id: uuidJson('m.id'),
  channel_id: uuidJson('m.channel_id'),
  author_id: uuidJson('m.author_id'),
  content: valueJson('m.content'),
  content_json: usuallyNull(jsonColumn, 'm.content_json'),
  metadata: usuallyNull(jsonColumn, 'm.metadata'),
  thread_id: uuidJson('m.thread_id'),
  // Called only where the message's hints say (a subquery here would be set up on every execution; migration 240).
  thread: { json: `coalesce(CASE WHEN m.has_replies THEN axid_thread_json(m.id)::text END, 'null')`, usual: { when: 'NOT m.has_replies', json: 'null' } },
  reactions: { json: `CASE WHEN m.has_reactions THEN axid_reactions_json(m.id)::text ELSE '[]' END`, usual: { when: 'NOT m.has_reactions', json: '[]' } },
  card_origin: usuallyNull(valueJson, 'm.card_origin'),
  mentioned_user_ids: usuallyEmpty('m.mentioned_user_ids'),
  mentioned_group_ids: usuallyEmpty('m.mentioned_group_ids'),
  display: usuallyNull(jsonColumn, 'm.display'),
  webhook_id: usuallyNull(valueJson, 'm.webhook_id'),
  created_at: timeJson('m.created_at'),
  edited_at: usuallyNull(timeJson, 'm.edited_at'),
  streaming: { ...valueJson('m.streaming'), usual: { when: 'NOT m.streaming', json: 'false' } },
  pinned_at: usuallyNull(timeJson, 'm.pinned_at'),
  pinned_by: usuallyNull(uuidJson, 'm.pinned_by'),
  unfurls: { json: `coalesce(m.unfurls::text, '[]')`, usual: { when: 'm.unfurls IS NULL', json: '[]' } },
};

/** Parts of a JSON text, literal or SQL, joined by `||` with neighbouring literals made one. */
type Part = { literal: string } | { sql: string };
const concatenated = (parts: Part[]) => {
  const merged: Part[] = [];
  for (const part of parts) {
    const last = merged.at(-1);
    if ('literal' in part && last && 'literal' in last) merged[merged.length - 1] = { literal: last.literal + part.literal };
    else merged.push(part);
  }
  return merged.map((part) => ('literal' in part ? `'${part.literal.replaceAll("'", "''")}'` : part.sql)).join('\n    || ');
};

/**
 * A Message as JSON text, with the fields of `level` (messageFieldsAt);
 * `fields` overrides how some are given. Written by concatenation, not as
 * to_json of a row: to_json escapes every key of every message again, one
 * character at a time (a page cost PostgreSQL a fifth more; docs/bench.md,
 * "History pages: planned once, written by concatenation"). A usual message
 * (FieldSql) takes the branch with its usual values written as literals.
 */
const messageJson = (level: FeatureLevel, fields: Record<MessageField, FieldSql> = MESSAGE_FIELD_SQL, usualBranch = true) => {
  const names = messageFieldsAt(level);
  const written = (usual: boolean) =>
    concatenated([
      ...names.flatMap((name, i): Part[] => {
        const key = `${i === 0 ? '{' : ','}"${name}":`;
        const field = fields[name];
        return usual && field.usual ? [{ literal: key + field.usual.json }] : [{ literal: key }, { sql: field.json }];
      }),
      { literal: '}' },
    ]);
  const tests = usualBranch ? names.flatMap((name) => fields[name].usual?.when ?? []) : [];
  return tests.length === 0 ? `(${written(false)})` : `(CASE WHEN ${tests.join(' AND ')}\n   THEN ${written(true)}\n   ELSE ${written(false)} END)`;
};

/** The same Message with every field's own expression, never the usual branch: what a test holds that branch to. */
export const everyFieldJson = (level: FeatureLevel) => messageJson(level, MESSAGE_FIELD_SQL, false);

/**
 * Posted messages as message.created events at `level`, for the relay
 * (shared/relay/outbox-table.ts reads them with the outbox, in one order):
 * the event postMessage gives its commit listeners, byte for byte, with the
 * message as it was posted (no thread, no reactions yet). Its content is the
 * row's when the relay reads it: an edit or a delete that committed before is
 * published after it (message.updated, message.deleted).
 */
export const messageCreatedEvents =
  (level: FeatureLevel): EventSource =>
  (inWindow) => `
  SELECT m.seq AS id, 'message.created' AS type,
         '{"type":"message.created","to":{"scope":"channel","workspace_id":"' || m.workspace_id || '","channel_id":"' || m.channel_id ||
         '"},"data":{"message":' || ${messageJson(level, { ...MESSAGE_FIELD_SQL, thread: always('null'), reactions: always('[]') })} || '}}' AS event,
         m.channel_id::text AS channel_id, m.trace_context AS trace
    FROM messages m, w WHERE ${inWindow('m.event_xid')} AND m.seq > w.after`;

// The list ($1), the cursor ($2) and the limit ($3) are read through
// InitPlans, `(SELECT $n)`: the index scan and the LIMIT take them all the
// same, and the planner, knowing none of them, estimates every execution
// alike, so it keeps the prepared statement's generic plan. With the values
// in sight it planned every page anew (a fifth of a page's PostgreSQL time):
// it estimated a parameter's `LIMIT $3` at a tenth of the rows in the generic
// plan but not in a custom one, and a newest page's cursor as taking in the
// whole channel (test/api/indexes.test.ts counts the plans).
const CHANNEL_WHERE = 'm.channel_id = (SELECT $1::uuid) AND m.thread_id IS NULL';
const THREAD_WHERE = 'm.thread_id = (SELECT $1::uuid)';
const CURSOR = '(SELECT $2::bigint)';
const LIMIT_AND_ONE = '(SELECT $3::int + 1)';

/**
 * One page as JSON text, newest first: the first $3 of the $3 + 1 rows
 * fetched (the extra row only says whether there is more, without a COUNT).
 */
const pageStatement = (name: string, where: string, level: FeatureLevel): PreparedStatement => ({
  name: `${name}_${level}`,
  text: `SELECT ${jsonArray('p.message', 'p.seq DESC', 'p.n <= $3')} AS data,
                min(p.seq) FILTER (WHERE p.n <= $3) AS last_seq,
                count(*) > $3 AS has_more
           FROM (SELECT m.seq, row_number() OVER (ORDER BY m.seq DESC) AS n, ${messageJson(level)} AS message
                   FROM messages m
                  WHERE ${where} AND m.seq < ${CURSOR}
                  ORDER BY m.seq DESC LIMIT ${LIMIT_AND_ONE}) p`,
});

// Level 3: pages that go both ways (docs/decisions.md, "Messages"). Each
// first picks its range of seq (lo..hi) on the index alone, with whether
// there are messages older and newer than it, then renders the range newest
// first: `around` a message, `after` a cursor (newer), and `cursor` (older,
// as the level-2 statement, with whether there are newer ones for
// prev_cursor). Rows: data, last_seq (lo), first_seq (hi), has_more (older),
// has_newer, found (false: `around` names no message of the list). "Is there
// one beyond" is the nearest seq in index order, not EXISTS: with EXISTS the
// planner took a sequential scan, expecting an early match.
const rangePage = (name: string, where: string, level: FeatureLevel, pick: string): PreparedStatement => ({
  name: `${name}_${level}`,
  text: `WITH ${pick}
         SELECT (SELECT ${jsonArray('x.message', 'x.seq DESC')}
                   FROM (SELECT m.seq, ${messageJson(level)} AS message
                           FROM messages m WHERE ${where} AND m.seq BETWEEN b.lo AND b.hi) x) AS data,
                b.lo AS last_seq, b.hi AS first_seq, b.has_older AS has_more, b.has_newer, b.found
           FROM b`,
});

/** $2: messages older than this seq; $3: the limit. */
const olderPick = (where: string) => `s AS (SELECT m.seq, row_number() OVER (ORDER BY m.seq DESC) AS n FROM messages m
                        WHERE ${where} AND m.seq < ${CURSOR} ORDER BY m.seq DESC LIMIT ${LIMIT_AND_ONE}),
       r AS (SELECT min(seq) FILTER (WHERE n <= $3) AS lo, max(seq) AS hi, count(*) > $3 AS has_older FROM s),
       b AS (SELECT r.lo, r.hi, r.has_older, true AS found,
                    (SELECT m.seq FROM messages m WHERE ${where} AND m.seq > r.hi ORDER BY m.seq LIMIT 1) IS NOT NULL AS has_newer FROM r)`;

/** $2: messages newer than this seq; $3: the limit. */
const newerPick = (where: string) => `s AS (SELECT m.seq, row_number() OVER (ORDER BY m.seq) AS n FROM messages m
                        WHERE ${where} AND m.seq > ${CURSOR} ORDER BY m.seq LIMIT ${LIMIT_AND_ONE}),
       r AS (SELECT min(seq) AS lo, max(seq) FILTER (WHERE n <= $3) AS hi, count(*) > $3 AS has_newer FROM s),
       b AS (SELECT r.lo, r.hi, r.has_newer, true AS found,
                    (SELECT m.seq FROM messages m WHERE ${where} AND m.seq < r.lo ORDER BY m.seq DESC LIMIT 1) IS NOT NULL AS has_older FROM r)`;

/**
 * $2: the target message's id; $3: the limit; $4: how many newer messages
 * are wanted (the rest of the limit is the target and older ones). A side
 * with fewer than its share leaves the rest to the other side.
 */
const aroundPick = (where: string) => `t AS (SELECT m.seq FROM messages m WHERE ${where} AND m.id = $2::uuid),
       o AS (SELECT m.seq FROM messages m, t WHERE ${where} AND m.seq <= t.seq ORDER BY m.seq DESC LIMIT ${LIMIT_AND_ONE}),
       w AS (SELECT m.seq FROM messages m, t WHERE ${where} AND m.seq > t.seq ORDER BY m.seq LIMIT ${LIMIT_AND_ONE}),
       c AS (SELECT (SELECT count(*) FROM o)::int AS o, (SELECT count(*) FROM w)::int AS w),
       k AS (SELECT c.o, c.w, least(c.w, greatest($4::int, $3::int - c.o)) AS nw FROM c),
       q AS (SELECT k.o, k.w, k.nw, least(k.o, $3::int - k.nw) AS no FROM k),
       b AS (SELECT (SELECT min(x.seq) FROM (SELECT seq FROM o ORDER BY seq DESC LIMIT q.no) x) AS lo,
                    coalesce((SELECT max(y.seq) FROM (SELECT seq FROM w ORDER BY seq LIMIT q.nw) y), (SELECT seq FROM t)) AS hi,
                    q.o > q.no AS has_older, q.w > q.nw AS has_newer, EXISTS (SELECT 1 FROM t) AS found FROM q)`;

/** The three level-3 statements of one list (channel or thread). */
export interface BothWaysPages {
  older: PreparedStatement;
  newer: PreparedStatement;
  around: PreparedStatement;
}
const bothWaysPages = (name: string, where: string, level: FeatureLevel): BothWaysPages => ({
  older: rangePage(`${name}_older`, where, level, olderPick(where)),
  newer: rangePage(`${name}_newer`, where, level, newerPick(where)),
  around: rangePage(`${name}_around`, where, level, aroundPick(where)),
});

// Without a cursor the bound is the largest bigint, so one generic plan (an
// index range scan, newest first) serves every page.
export const NO_CURSOR = '9223372036854775807';

/**
 * The Message of one level as Postgres renders it (the fields of
 * messageFieldsAt, byte for byte as messagePresenter of the same level):
 * history pages and search results. Bound to a runtime with its presenters
 * (services/core/presenters.ts), so the queries ask no level.
 */
export interface MessageSql {
  /** One Message (row `m`) as JSON text. */
  json: string;
  /** History pages: top-level messages of a channel, and one thread's replies. */
  channelPage: PreparedStatement;
  threadPage: PreparedStatement;
  /** Where history pages go both ways (level 3: `around`, `after`, prev_cursor). */
  bothWays?: { channel: BothWaysPages; thread: BothWaysPages };
}
const messageSqlOf = (level: FeatureLevel): MessageSql => ({
  json: messageJson(level),
  channelPage: pageStatement('axid_channel_page', CHANNEL_WHERE, level),
  threadPage: pageStatement('axid_thread_page', THREAD_WHERE, level),
  bothWays: existsAt(BOTH_WAYS, level)
    ? { channel: bothWaysPages('axid_channel_page', CHANNEL_WHERE, level), thread: bothWaysPages('axid_thread_page', THREAD_WHERE, level) }
    : undefined,
});
// Made once per level (a statement's name, `<name>_<level>`, stands for one text).
const MESSAGE_SQL = { 2: messageSqlOf(2), 3: messageSqlOf(3) } satisfies Record<FeatureLevel, MessageSql>;
export const messageSqlAt = (level: FeatureLevel): MessageSql => MESSAGE_SQL[level];
/** Level 2's history statements (plans checked in test/api/indexes.test.ts, run by the bench). */
export const CHANNEL_PAGE = MESSAGE_SQL[2].channelPage;
export const THREAD_PAGE = MESSAGE_SQL[2].threadPage;

/**
 * A history page, newest first, with thread counts and reactions aggregated
 * (looked up only for messages whose hints say they may have them), in one round trip: top-level messages (messages_channel_seq) or one
 * thread's replies (messages_thread_seq), rendered as `sql` gives a Message.
 */
export async function listMessages(db: Knex, sql: MessageSql, o: { channelId: string; threadId?: string; before?: number; limit: number }): Promise<JsonPage> {
  const { rows } = await runPrepared<{ data: string; last_seq: string | null; has_more: boolean }>(db, o.threadId ? sql.threadPage : sql.channelPage, [
    o.threadId ?? o.channelId,
    o.before === undefined ? NO_CURSOR : String(o.before),
    o.limit,
  ]);
  const row = rows[0]!;
  return { data: row.data, lastSeq: row.last_seq === null ? null : Number(row.last_seq), hasMore: row.has_more };
}

/** Where a page of history starts: the newest, before (older than) or after (newer than) a seq, or around a message. */
export type PageFrom = { before?: number } | { after: number } | { around: string };

/**
 * A level-3 history page (sql.bothWays): as listMessages, with whether there
 * are newer messages than it (firstSeq, hasNewer: prev_cursor). Undefined
 * when `around` names no message of the list.
 */
export async function listMessagesBothWays(
  db: Knex,
  pages: NonNullable<MessageSql['bothWays']>,
  o: { channelId: string; threadId?: string; from: PageFrom; limit: number },
): Promise<JsonPage | undefined> {
  const set = o.threadId ? pages.thread : pages.channel;
  const list = o.threadId ?? o.channelId;
  const { from, limit } = o;
  const [statement, values] =
    'around' in from
      ? [set.around, [list, from.around, limit, limit - 1 - Math.floor(limit / 2)]]
      : 'after' in from
        ? [set.newer, [list, String(from.after), limit]]
        : [set.older, [list, from.before === undefined ? NO_CURSOR : String(from.before), limit]];
  const { rows } = await runPrepared<{ data: string; last_seq: string | null; first_seq: string | null; has_more: boolean; has_newer: boolean; found: boolean }>(
    db,
    statement,
    values,
  );
  const row = rows[0]!;
  if (!row.found) return undefined;
  return {
    data: row.data,
    lastSeq: row.last_seq === null ? null : Number(row.last_seq),
    hasMore: row.has_more,
    firstSeq: row.first_seq === null ? null : Number(row.first_seq),
    hasNewer: row.has_newer,
  };
}

/**
 * A message as read for an answer, with its thread's counts. Prepared
 * (shared/db/knex.ts runPrepared; in a transaction, on its connection): on
 * ten million messages PostgreSQL spent about 1.3 ms planning it for 0.1 ms of
 * work (a permalink, an edit, a reaction, a pin each read one).
 */
const MESSAGE_SELECT = `SELECT ${MESSAGE_COLUMNS.join(', ')} FROM messages m LEFT JOIN threads t ON t.root_message_id = m.id`;
export const FIND_MESSAGE: PreparedStatement = { name: 'axid_find_message', text: `${MESSAGE_SELECT} WHERE m.id = $1 AND m.channel_id = $2` };
const FIND_MESSAGE_BY_ID: PreparedStatement = { name: 'axid_find_message_by_id', text: `${MESSAGE_SELECT} WHERE m.id = $1` };

export const findMessage = async (db: Db, channelId: string, messageId: string): Promise<MessageRow | undefined> =>
  (await runPrepared<MessageRow>(db, FIND_MESSAGE, [messageId, channelId])).rows[0];

/** A message by id alone (the worker's jobs). */
export const findMessageById = async (db: Db, messageId: string): Promise<MessageRow | undefined> =>
  (await runPrepared<MessageRow>(db, FIND_MESSAGE_BY_ID, [messageId])).rows[0];

export const isRootOf = async (db: Db, channelId: string, messageId: string) =>
  Boolean(await db('messages').where({ id: messageId, channel_id: channelId }).whereNull('thread_id').first('id'));

/** The reactions of a page of messages in one query, grouped per message in first-reacted order (prepared: planned once per connection). */
const REACTIONS_FOR: PreparedStatement = {
  name: 'axid_reactions_for',
  text: `SELECT message_id, emoji, count(*)::int AS count, array_agg(user_id::text ORDER BY created_at, user_id) AS user_ids
           FROM reactions WHERE message_id = ANY($1::uuid[])
          GROUP BY message_id, emoji ORDER BY min(created_at), emoji`,
};

export async function reactionsFor(db: Db, messageIds: string[]): Promise<Map<string, ReactionSummary[]>> {
  const byMessage = new Map<string, ReactionSummary[]>();
  if (messageIds.length === 0) return byMessage;
  const rows = await runPrepared(db, REACTIONS_FOR, [uuidArray(messageIds)]);
  for (const r of rows.rows as { message_id: string; emoji: string; count: number; user_ids: string[] }[]) {
    const list = byMessage.get(r.message_id) ?? [];
    list.push({ emoji: r.emoji, count: r.count, user_ids: r.user_ids });
    byMessage.set(r.message_id, list);
  }
  return byMessage;
}

/**
 * Keeps the version an edit is about to replace (edit history), locking the
 * message so that concurrent edits each keep the version they replace.
 * Returns false when the message is gone.
 */
export async function keepVersion(trx: Knex.Transaction, id: string): Promise<boolean> {
  const { rowCount } = await trx.raw(
    `WITH current AS (
       SELECT id, content, content_json, metadata, coalesce(edited_at, created_at) AS written_at, author_id
         FROM messages WHERE id = ?::uuid FOR UPDATE
     )
     INSERT INTO message_edits (message_id, content, content_json, metadata, edited_at, editor_id)
     SELECT id, content, content_json, metadata, written_at, author_id FROM current`,
    [id],
  );
  return rowCount === 1;
}

export interface MessageEditRow {
  seq: number;
  content: string;
  content_json: unknown;
  metadata: unknown;
  edited_at: Date;
  editor_id: string | null;
}

/** A message's earlier versions, newest first (keyset on seq; limit + 1 rows). */
export const listEdits = (db: Db, messageId: string, o: { before?: number; limit: number }) =>
  db('message_edits')
    .where({ message_id: messageId })
    .modify((q) => {
      if (o.before !== undefined) q.where('seq', '<', o.before);
    })
    .orderBy('seq', 'desc')
    .limit(o.limit + 1)
    .select('seq', 'content', 'content_json', 'metadata', 'edited_at', 'editor_id') as Promise<MessageEditRow[]>;

/** An edit; a streaming reply's next append then sanitizes its whole content again (nothing of it is settled). */
export const updateMessage = async (db: Db, id: string, patch: Record<string, unknown>) =>
  db('messages')
    .where({ id })
    .update({ ...patch, edited_at: db.fn.now(), stream_settled: null });

/** Deletes a message (a root takes its replies and thread record with it). */
export const deleteMessage = (db: Db, id: string) => db('messages').where({ id }).delete();

/** A reply is gone: one fewer in its thread, last_reply_at from what remains. */
export const decrementThread = (db: Db, rootId: string) =>
  db.raw(
    `UPDATE threads SET reply_count = GREATEST(reply_count - 1, 0),
            last_reply_at = (SELECT max(created_at) FROM messages WHERE thread_id = ?::uuid)
      WHERE root_message_id = ?::uuid`,
    [rootId, rootId],
  );

/** Adds a reaction (in the caller's transaction); the first one marks its message has_reactions. */
export const insertReaction = async (db: Db, r: { message_id: string; user_id: string; emoji: string }) => {
  const [row] = await db('reactions').insert(r).onConflict(['message_id', 'emoji', 'user_id']).ignore().returning('*');
  if (row) await db('messages').where({ id: r.message_id, has_reactions: false }).update({ has_reactions: true });
  return row as { message_id: string; user_id: string; emoji: string; created_at: Date } | undefined;
};

export const findReaction = (db: Db, r: { message_id: string; user_id: string; emoji: string }) =>
  db('reactions').where(r).first() as Promise<{ message_id: string; user_id: string; emoji: string; created_at: Date } | undefined>;

export const deleteReaction = async (db: Db, r: { message_id: string; user_id: string; emoji: string }) =>
  (await db('reactions').where(r).delete()) > 0;

/** Content set by the system (a webhook post's rendering), not an edit: edited_at stays. Returns the channel, or undefined if gone. */
export const replaceContent = async (db: Db, id: string, patch: Record<string, unknown>): Promise<string | undefined> => {
  const [row] = await db('messages').where({ id }).update(patch).returning('channel_id');
  return (row as { channel_id: string } | undefined)?.channel_id;
};

/** Link previews (level 3), written only while the message has the content they were read from. */
export const setUnfurls = async (db: Db, id: string, content: string, unfurlsJson: string) => {
  const [row] = await db('messages').where({ id, content }).update({ unfurls: unfurlsJson }).returning(['channel_id', 'workspace_id']);
  return row as { channel_id: string; workspace_id: string } | undefined;
};

/** A message of the channel, locked until the transaction ends (streamed replies). */
export const lockMessage = (trx: Knex.Transaction, channelId: string, messageId: string) =>
  trx('messages')
    .where({ id: messageId, channel_id: channelId })
    .forUpdate()
    .first(
      'id',
      'author_id',
      'streaming',
      'stream_settled',
      trx.raw('char_length(content) AS length'),
      // A streaming reply's unsettled part only (migration 110): an append never reads, sends or keeps the rest in memory.
      trx.raw('substr(content, coalesce(stream_settled, 0) + 1) AS open_content'),
    ) as Promise<{ id: string; author_id: string | null; streaming: boolean; stream_settled: number | null; length: number; open_content: string } | undefined>;

/**
 * Keeps the first `keep` characters of a streamed reply's content, puts
 * `tail` after them, and records that `settled` characters are settled now
 * (migration 110) and its last activity; not an edit (edited_at stays).
 */
export const appendContent = async (trx: Knex.Transaction, id: string, o: { keep: number; tail: string; settled: number }) => {
  await trx('messages')
    .where({ id })
    .update({ content: trx.raw('left(content, ?) || ?', [o.keep, o.tail]), stream_settled: o.settled, streaming_at: trx.fn.now() });
  return id;
};

export const finishStreaming = (trx: Knex.Transaction, id: string, patch: Record<string, unknown>) =>
  trx('messages')
    .where({ id })
    .update({ ...patch, streaming: false, streaming_at: null, stream_settled: null });

/** Finishes up to `limit` replies left streaming for `seconds` (skipping ones a request holds); returns them. */
export async function claimStaleStreams(trx: Knex.Transaction, seconds: number, limit: number) {
  const { rows } = await trx.raw(
    `UPDATE messages SET streaming = false, streaming_at = NULL, stream_settled = NULL
      WHERE id IN (SELECT id FROM messages WHERE streaming AND streaming_at < now() - make_interval(secs => ?)
                    ORDER BY streaming_at LIMIT ? FOR UPDATE SKIP LOCKED)
      RETURNING id, channel_id, workspace_id`,
    [seconds, limit],
  );
  return rows as { id: string; channel_id: string; workspace_id: string }[];
}

// ---- messages that carry a file (level 3, contract §17; migration 120) ----

/** The conversations where a message carrying the file was posted (at most `limit`), with their kind. */
export const channelsCarryingFile = (db: Db, workspaceId: string, fileId: string, limit = 100): Promise<{ channel_id: string; kind: string }[]> =>
  db
    .select('c.id as channel_id', 'c.kind')
    .from('channels as c')
    .whereIn(
      'c.id',
      db('messages').distinct('channel_id').whereRaw(`${CARRIED_FILE_ID} = ? AND ${CARRIES_A_FILE}`, [fileId]).andWhere('workspace_id', workspaceId),
    )
    .limit(limit);

/** The files a message and its replies carry (the replies go with a deleted root). */
export async function filesCarriedBy(db: Db, messageId: string): Promise<string[]> {
  const rows = (await db('messages')
    .distinct(db.raw(`${CARRIED_FILE_ID} AS file_id`))
    .where((q) => q.where('id', messageId).orWhere('thread_id', messageId))
    .whereRaw(CARRIES_A_FILE)) as { file_id: string | null }[];
  return rows.map((r) => r.file_id).filter((id): id is string => id !== null && isUuid(id));
}

/** Whether any message still carries the file. */
export const isFileCarried = async (db: Db, fileId: string): Promise<boolean> =>
  Boolean(await db('messages').whereRaw(`${CARRIED_FILE_ID} = ? AND ${CARRIES_A_FILE}`, [fileId]).first(db.raw('1 AS one')));

/** Replaces the metadata of every message carrying the file by `metadata` (the file shown as removed); their ids and channels. */
export const replaceCarriedFile = (db: Db, workspaceId: string, fileId: string, metadata: string): Promise<{ id: string; channel_id: string }[]> =>
  db('messages')
    .whereRaw(`${CARRIED_FILE_ID} = ? AND ${CARRIES_A_FILE}`, [fileId])
    .andWhere('workspace_id', workspaceId)
    .update({ metadata: db.raw('?::json', [metadata]) })
    .returning(['id', 'channel_id']);

/**
 * The groups a message mentions (level 3), written in the transaction that
 * posted it: the post statement stays as it is for every message without one,
 * and the relay, which renders message.created from the row once that
 * transaction is visible, sees them.
 */
export const setMentionedGroups = (trx: Knex.Transaction, id: string, groupIds: string[]) =>
  trx('messages').where({ id }).update({ mentioned_group_ids: trx.raw('?::text[]', [groupIds]) });
