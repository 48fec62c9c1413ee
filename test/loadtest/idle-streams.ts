// `tsx test/loadtest/idle-streams.ts`: the gateway's CPU per open, idle
// stream (docs/scaling.md, "Per-core figures"): a gateway process with
// IDLE_STREAMS streams open and no events, its CPU time over IDLE_SECONDS
// (keep-alive comments every 15 s of silence, the Redis reader, timers),
// against the same process with none. Uses the kept ten-million-message
// workspace's users; removes its keys at the end. Loopback only.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import pg from 'pg';
import { cpuMsOf, memoryOf, stopAll } from '../bench/lib/proc.js';
import { insertKeys, startGateway } from './setup.js';

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
  const users = (await db.query<{ id: string }>(`SELECT id FROM users ORDER BY seq LIMIT 100`)).rows;
  const keys = await insertKeys(db, users.map((u) => u.id), name);
  const { proc: gateway, url } = await startGateway(`postgres://postgres@127.0.0.1:5432/${DATABASE}`, `axididle:${name}:`);
  await sleep(5_000);
  const base0 = cpuMsOf(gateway.pid);
  await sleep(SECONDS * 1000);
  const baseCpuMs = cpuMsOf(gateway.pid) - base0;
  const rss0 = memoryOf(gateway.pid).rssKb;
  log(`no streams: ${baseCpuMs} ms of CPU in ${SECONDS} s`);
  let opened = 0;
  for (let i = 0; i < STREAMS; i++) {
    await new Promise<void>((resolve) => {
      const req = http.get(`${url}/api/v1/stream`, { headers: { authorization: `Bearer ${keys[i % keys.length]!}` }, agent: false }, (res) => {
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
