// `tsx test/loadtest/idle-streams.ts`: the gateway's CPU per open, idle
// stream (docs/scaling.md, "Per-core figures"): a gateway process with
// IDLE_STREAMS streams open and no events, its CPU time over IDLE_SECONDS
// (keep-alive comments every 15 s of silence, the Redis reader, timers),
// against the same process with none. Uses the kept ten-million-message
// workspace's users; removes its keys at the end. Loopback only.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import pg from 'pg';
import { generateApiKey } from '../../shared/auth.js';
import { freePort } from '../../shared/embedded.js';
import { cpuMsOf, memoryOf, spawnNode, stopAll, waitReady } from '../bench/lib/proc.js';

const STREAMS = Number(process.env.IDLE_STREAMS ?? 5_000);
const SECONDS = Number(process.env.IDLE_SECONDS ?? 60);
const DATABASE = process.env.LOADTEST_DATABASE ?? 'axid_bench_10m';
const log = (m: string) => process.stderr.write(`[idle ${new Date().toISOString().slice(11, 19)}] ${m}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const db = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:5432/${DATABASE}` });
await db.connect();
const name = `idle-${randomBytes(3).toString('hex')}`;
const sockets: http.ClientRequest[] = [];
try {
  const users = (await db.query<{ id: string; workspace_id: string }>(`SELECT id, workspace_id FROM users ORDER BY seq LIMIT 100`)).rows;
  const keys = users.map(() => generateApiKey());
  await db.query(
    `INSERT INTO api_keys (workspace_id, user_id, name, prefix, key_hash)
     SELECT $1, k.user_id, $2, k.prefix, k.hash FROM unnest($3::uuid[], $4::text[], $5::text[]) AS k(user_id, prefix, hash)`,
    [users[0]!.workspace_id, name, users.map((u) => u.id), keys.map((k) => k.prefix), keys.map((k) => k.hash)],
  );
  const port = await freePort();
  const gateway = spawnNode('gateway', 'services/main.ts', {
    env: {
      DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${DATABASE}`,
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_KEY_PREFIX: `axididle:${name}:`,
      ROLES: 'gateway',
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      MIGRATE_ON_START: 'false',
      STREAM_MAX_PER_USER: '100000',
      RATE_LIMIT_POINTS: '1000000000',
    },
    raiseFileLimit: true,
  });
  const url = `http://127.0.0.1:${port}`;
  await waitReady(gateway, `${url}/readyz`);
  await sleep(5_000);
  const base0 = cpuMsOf(gateway.pid);
  await sleep(SECONDS * 1000);
  const baseCpuMs = cpuMsOf(gateway.pid) - base0;
  const rss0 = memoryOf(gateway.pid).rssKb;
  log(`no streams: ${baseCpuMs} ms of CPU in ${SECONDS} s`);
  let opened = 0;
  for (let i = 0; i < STREAMS; i++) {
    await new Promise<void>((resolve) => {
      const req = http.get(`${url}/api/v1/stream`, { headers: { authorization: `Bearer ${keys[i % keys.length]!.key}` }, agent: false }, (res) => {
        res.on('data', (chunk: Buffer) => {
          if (chunk.includes('event: init')) {
            opened++;
            resolve();
          }
        });
      });
      req.on('error', () => resolve());
      sockets.push(req);
    });
  }
  log(`${opened} streams open; waiting 20 s, then measuring ${SECONDS} s`);
  await sleep(20_000);
  const t0 = cpuMsOf(gateway.pid);
  await sleep(SECONDS * 1000);
  const streamsCpuMs = cpuMsOf(gateway.pid) - t0;
  const rss1 = memoryOf(gateway.pid).rssKb;
  const perStreamUsPerS = ((streamsCpuMs - baseCpuMs) * 1000) / opened / SECONDS;
  process.stdout.write(
    `${JSON.stringify({ streams: opened, seconds: SECONDS, baseCpuMs, streamsCpuMs, perStreamCpuMicrosPerSecond: perStreamUsPerS, rssGrowthKbPerStream: (rss1 - rss0) / opened })}\n`,
  );
} finally {
  for (const s of sockets) s.destroy();
  await stopAll();
  await db.query(`DELETE FROM api_keys WHERE name = $1`, [name]).catch(() => undefined);
  await db.end();
}
