// The second floor of scenario 1: the least code that keeps Axid's guarantee
// (every committed post reaches the event stream, in commit order, across a
// crash), so that the bench shows what the guarantee costs apart from what
// Axid's own code costs. node:http, parse JSON, then one statement that
// writes the message and its event the way Axid does, and a relay in the same
// process that moves committed events to the Redis stream. FLOOR_OUTBOX picks
// the mechanism:
// - `row`: the message and an outbox row carrying the whole event (jsonb) in
//   one statement; the relay reads the oldest rows and deletes the ones it
//   published with its next read (Axid's outbox before issue 28);
// - `slim`: the message and an outbox row carrying only the message id in one
//   statement; the relay renders the events with one join per batch and
//   deletes as `row` does (a design measured for issue 28, not taken);
// - `cursor`: the message row is the event: it carries its writing
//   transaction's id (xid8), and the relay reads the rows of the transactions
//   that became visible since its last snapshot (Axid's design since issue 28,
//   shared/relay/outbox-table.ts), no second row and no delete.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { Redis } from 'ioredis';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const relayDb = new pg.Client({ connectionString: process.env.DATABASE_URL });
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const streamKey = process.env.STREAM_KEY!;
const authorId = process.env.AUTHOR_ID ?? null;
const mode = process.env.FLOOR_OUTBOX === 'cursor' ? 'cursor' : process.env.FLOOR_OUTBOX === 'slim' ? 'slim' : 'row';
const route = /^\/api\/v1\/channels\/([0-9a-f-]{36})\/messages$/;
const BATCH = 500;

const send = (res: http.ServerResponse, status: number, body: string) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(body);
};

const INSERT_ROW = {
  name: 'floor_insert_row',
  text: `WITH m AS (INSERT INTO floor_ob_messages (id, channel_id, author_id, content, metadata, created_at) VALUES ($1, $2, $3, $4, $5, $6))
         INSERT INTO floor_outbox (event) VALUES ($7::jsonb)`,
};
const INSERT_SLIM = {
  name: 'floor_insert_slim',
  text: `WITH m AS (INSERT INTO floor_ob_messages (id, channel_id, author_id, content, metadata, created_at) VALUES ($1, $2, $3, $4, $5, $6))
         INSERT INTO floor_outbox_slim (message_id) VALUES ($1)`,
};
const INSERT_CURSOR = {
  name: 'floor_insert_cursor',
  text: `INSERT INTO floor_ob_messages (id, channel_id, author_id, content, metadata, created_at, xid)
         VALUES ($1, $2, $3, $4, $5, $6, pg_current_xact_id())`,
};

// ------------------------------------------------------------------ relay

let published: string[] = [];
/** cursor mode: the snapshot up to which everything is published, the one being read, and the last seq of it read. */
let cursor = { done: '', target: null as string | null, after: '0' };

async function readRows(): Promise<{ key: string; event: string }[]> {
  if (mode === 'row') {
    const deleting = published;
    published = [];
    const { rows } = await relayDb.query<{ id: string; event: string }>(
      `WITH done AS (DELETE FROM floor_outbox WHERE id = ANY($1::bigint[]))
       SELECT id, event::text AS event FROM floor_outbox WHERE NOT (id = ANY($1::bigint[])) ORDER BY id LIMIT $2`,
      [deleting, BATCH],
    );
    return rows.map((r) => ({ key: r.id, event: r.event }));
  }
  if (mode === 'slim') {
    const deleting = published;
    published = [];
    const { rows } = await relayDb.query<{ id: string; event: string }>(
      `WITH done AS (DELETE FROM floor_outbox_slim WHERE id = ANY($1::bigint[]))
       SELECT o.id, json_build_object('type', 'message.created', 'message',
                json_build_object('id', f.id, 'channel_id', f.channel_id, 'author_id', f.author_id, 'content', f.content,
                                  'metadata', f.metadata, 'created_at', f.created_at))::text AS event
         FROM floor_outbox_slim o JOIN floor_ob_messages f ON f.id = o.message_id
        WHERE NOT (o.id = ANY($1::bigint[])) ORDER BY o.id LIMIT $2`,
      [deleting, BATCH],
    );
    return rows.map((r) => ({ key: r.id, event: r.event }));
  }
  const { rows } = await relayDb.query<{ seq: string; event: string; snap: string }>(
    `WITH s AS (SELECT coalesce($2::pg_snapshot, pg_current_snapshot()) AS target, $1::pg_snapshot AS done)
     SELECT s.target::text AS snap, m.seq, m.event FROM s LEFT JOIN LATERAL (
       SELECT f.seq, json_build_object('type', 'message.created', 'message',
                json_build_object('id', f.id, 'channel_id', f.channel_id, 'author_id', f.author_id, 'content', f.content,
                                  'metadata', f.metadata, 'created_at', f.created_at))::text AS event
         FROM floor_ob_messages f
        WHERE (f.xid >= pg_snapshot_xmax(s.done) OR f.xid = ANY (ARRAY(SELECT pg_snapshot_xip(s.done)))) AND f.seq > $3::bigint
          AND pg_visible_in_snapshot(f.xid, s.target)
        ORDER BY f.seq LIMIT $4) m ON true`,
    [cursor.done, cursor.target, cursor.after, BATCH],
  );
  const snap = rows[0]!.snap;
  const found = rows.filter((r) => r.seq !== null);
  if (found.length < BATCH) cursor = { done: snap, target: null, after: '0' };
  else cursor = { done: cursor.done, target: snap, after: found[found.length - 1]!.seq };
  return found.map((r) => ({ key: r.seq, event: r.event }));
}

async function drainOnce() {
  for (;;) {
    const rows = await readRows();
    if (rows.length === 0) return;
    const multi = redis.multi();
    for (const r of rows) multi.xadd(streamKey, 'MAXLEN', '~', '100000', '*', 'e', r.event, 'o', r.key);
    await multi.exec();
    if (mode !== 'cursor') published.push(...rows.map((r) => r.key));
    if (rows.length < BATCH) return;
  }
}

let draining: Promise<void> | null = null;
let again = false;
function drain() {
  if (draining) {
    again = true;
    return;
  }
  draining = drainOnce()
    .catch((err) => console.error('floor relay', err))
    .finally(() => {
      draining = null;
      if (again) {
        again = false;
        drain();
      }
    });
}
let scheduled = false;
function drainSoon() {
  if (scheduled) return;
  scheduled = true;
  setImmediate(() => {
    scheduled = false;
    drain();
  });
}
// The deletes of the last batch and anything a lost wake-up left.
setInterval(drain, 100).unref();

// ------------------------------------------------------------------ server

const server = http.createServer((req, res) => {
  const m = req.method === 'POST' ? route.exec(req.url ?? '') : null;
  if (!m) return send(res, 404, '{"error":{"code":"not_found"}}');
  const channelId = m[1]!;
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', async () => {
    let body: { content?: unknown; metadata?: unknown };
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return send(res, 400, '{"error":{"code":"validation_error"}}');
    }
    if (typeof body.content !== 'string' || body.content.length === 0) return send(res, 400, '{"error":{"code":"validation_error"}}');
    const message = { id: randomUUID(), channel_id: channelId, author_id: authorId, content: body.content, metadata: body.metadata ?? null, created_at: new Date() };
    const json = JSON.stringify(message);
    const values: unknown[] = [message.id, channelId, authorId, body.content, message.metadata === null ? null : JSON.stringify(message.metadata), message.created_at];
    try {
      if (mode === 'row') await pool.query({ ...INSERT_ROW, values: [...values, `{"type":"message.created","message":${json}}`] });
      else if (mode === 'slim') await pool.query({ ...INSERT_SLIM, values });
      else await pool.query({ ...INSERT_CURSOR, values });
      drainSoon();
      send(res, 201, `{"data":${json}}`);
    } catch {
      send(res, 500, '{"error":{"code":"internal_error"}}');
    }
  });
});
server.keepAliveTimeout = 65_000;

await relayDb.connect();
if (mode === 'cursor') {
  // Start from now: what was committed before is not this run's.
  const { rows } = await relayDb.query<{ snap: string }>('SELECT pg_current_snapshot()::text AS snap');
  cursor = { done: rows[0]!.snap, target: null, after: '0' };
}
server.listen(0, '127.0.0.1', () => console.log(`listening ${(server.address() as AddressInfo).port}`));
