// Floor of scenarios 1, 4 and 7: the least code that stores a posted message
// and publishes it. node:http, parse JSON, one INSERT through pg (pool 10),
// one XADD, answer 201.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { Redis } from 'ioredis';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const streamKey = process.env.STREAM_KEY!;
const authorId = process.env.AUTHOR_ID ?? null;
const route = /^\/api\/v1\/channels\/([0-9a-f-]{36})\/messages$/;

const send = (res: http.ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

const server = http.createServer((req, res) => {
  const m = req.method === 'POST' ? route.exec(req.url ?? '') : null;
  if (!m) return send(res, 404, { error: { code: 'not_found' } });
  const channelId = m[1]!;
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', async () => {
    let body: { content?: unknown; metadata?: unknown };
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return send(res, 400, { error: { code: 'validation_error' } });
    }
    if (typeof body.content !== 'string' || body.content.length === 0) return send(res, 400, { error: { code: 'validation_error' } });
    try {
      const { rows } = await pool.query(
        'INSERT INTO floor_messages (channel_id, author_id, content, metadata) VALUES ($1, $2, $3, $4) RETURNING id, seq, created_at',
        [channelId, authorId, body.content, body.metadata ?? null],
      );
      const row = rows[0];
      const message = { id: row.id, channel_id: channelId, author_id: authorId, content: body.content, metadata: body.metadata ?? null, created_at: row.created_at };
      await redis.xadd(streamKey, 'MAXLEN', '~', '100000', '*', 'c', channelId, 'e', JSON.stringify({ type: 'message.created', message }));
      send(res, 201, { data: message });
    } catch {
      send(res, 500, { error: { code: 'internal_error' } });
    }
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => console.log(`listening ${(server.address() as AddressInfo).port}`));
