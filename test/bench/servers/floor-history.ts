// Floor of scenario 2: the same keyset SELECT on the same messages table,
// through pg (pool 10) behind node:http.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const route = /^\/api\/v1\/channels\/([0-9a-f-]{36})\/messages$/;
const COLUMNS =
  'id, seq, workspace_id, channel_id, author_id, thread_id, content, content_json, metadata, card_origin, mentioned_user_ids, display, webhook_id, created_at, edited_at';

const send = (res: http.ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  const m = req.method === 'GET' ? route.exec(url.pathname) : null;
  if (!m) return send(res, 404, { error: { code: 'not_found' } });
  const limit = Math.min(200, Math.max(1, Number(url.searchParams.get('limit') ?? 50) || 50));
  const cursor = url.searchParams.get('cursor');
  const before = cursor ? /^s(\d{1,18})$/.exec(Buffer.from(cursor, 'base64url').toString())?.[1] : undefined;
  if (cursor && !before) return send(res, 400, { error: { code: 'validation_error' } });
  try {
    const { rows } = before
      ? await pool.query(
          `SELECT ${COLUMNS} FROM messages WHERE channel_id = $1 AND thread_id IS NULL AND seq < $2 ORDER BY seq DESC LIMIT $3`,
          [m[1], before, limit + 1],
        )
      : await pool.query(`SELECT ${COLUMNS} FROM messages WHERE channel_id = $1 AND thread_id IS NULL ORDER BY seq DESC LIMIT $2`, [
          m[1],
          limit + 1,
        ]);
    const more = rows.length > limit;
    const items = more ? rows.slice(0, limit) : rows;
    const next = more ? Buffer.from(`s${items[items.length - 1].seq}`).toString('base64url') : null;
    send(res, 200, { data: items.map(({ seq: _seq, ...rest }) => rest), pagination: { next_cursor: next, has_more: more } });
  } catch {
    send(res, 500, { error: { code: 'internal_error' } });
  }
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => console.log(`listening ${(server.address() as AddressInfo).port}`));
