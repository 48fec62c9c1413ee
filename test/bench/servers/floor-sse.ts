// Floor of scenarios 3, 4 and 5: a node:http SSE server. Each connection
// names its channel; events come from the Redis stream the post floor XADDs
// to; each event is encoded into one frame once and written to every
// connection of its channel.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const streamKey = process.env.STREAM_KEY!;
const byChannel = new Map<string, Set<http.ServerResponse>>();

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  const channel = url.searchParams.get('channel');
  if (req.method !== 'GET' || url.pathname !== '/api/v1/stream' || !channel) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  res.write('event: init\ndata: {"type":"init","presence":{}}\n\n');
  let set = byChannel.get(channel);
  if (!set) byChannel.set(channel, (set = new Set()));
  set.add(res);
  res.on('close', () => set.delete(res));
});
server.keepAliveTimeout = 0;
server.requestTimeout = 0;

setInterval(() => {
  for (const set of byChannel.values()) for (const res of set) res.write(':\n\n');
}, 20_000).unref();

async function relay() {
  let last = '$';
  for (;;) {
    const got = (await redis.xread('COUNT', 500, 'BLOCK', 0, 'STREAMS', streamKey, last)) as [string, [string, string[]][]][] | null;
    if (!got) continue;
    for (const [, entries] of got) {
      for (const [id, fields] of entries) {
        last = id;
        const set = byChannel.get(fields[1]!);
        if (!set || set.size === 0) continue;
        const frame = Buffer.from(`event: message.created\ndata: ${fields[3]}\n\n`);
        for (const res of set) res.write(frame);
      }
    }
  }
}

server.listen(0, '127.0.0.1', () => {
  console.log(`listening ${(server.address() as AddressInfo).port}`);
  void relay();
});
