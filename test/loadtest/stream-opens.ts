// `tsx test/loadtest/stream-opens.ts`: what a storm of stream openings costs
// (every client of a restarted gateway coming back; a loadtest's ramp):
// STREAM_OPENS streams (default 3,000) of as many users of the kept
// ten-million-message workspace, opened OPEN_CONCURRENCY (default 50) at a
// time on a gateway process of its own, each counted once its init frame
// arrives. Prints opens a second and the CPU each opening cost the gateway
// and PostgreSQL (all of the machine's postgres processes). STREAM_OPENS_PROF=1
// adds --cpu-prof (profiles in /tmp/axid-stream-opens). Removes its keys.
import { execSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import pg from 'pg';
import { cpuMsOf, stopAll } from '../bench/lib/proc.js';
import { insertKeys, startGateway } from './setup.js';

const OPENS = Number(process.env.STREAM_OPENS ?? 3_000);
const CONCURRENCY = Number(process.env.OPEN_CONCURRENCY ?? 50);
const DATABASE_URL = `postgres://postgres@127.0.0.1:5432/${process.env.LOADTEST_DATABASE ?? 'axid_bench_10m'}`;
const PROFILE_DIR = '/tmp/axid-stream-opens';

/** CPU time of every postgres process, in ms (clock ticks of 10 ms). */
const postgresCpuMs = () =>
  10 * Number(execSync(`for p in $(pgrep -x postgres); do awk '{print $14+$15}' /proc/$p/stat; done | awk '{s+=$1} END {print s+0}'`).toString());

const db = new pg.Client({ connectionString: DATABASE_URL });
await db.connect();
const name = `stream-opens-${randomBytes(3).toString('hex')}`;
const requests: http.ClientRequest[] = [];
try {
  const users = (await db.query<{ id: string }>(`SELECT id FROM users ORDER BY seq LIMIT $1`, [OPENS])).rows;
  const keys = await insertKeys(db, users.map((u) => u.id), name);
  const { proc: gateway, url } = await startGateway(
    DATABASE_URL,
    `axidopens:${name}:`,
    process.env.STREAM_OPENS_PROF === '1' ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : [],
  );
  const gateway0 = cpuMsOf(gateway.pid);
  const postgres0 = postgresCpuMs();
  const started = performance.now();
  let next = 0;
  let opened = 0;
  const openOne = (key: string) =>
    new Promise<void>((resolve) => {
      const req = http.get(`${url}/api/v1/stream`, { headers: { authorization: `Bearer ${key}` }, agent: false }, (res) => {
        res.on('data', (chunk: Buffer) => {
          if (chunk.includes('event: init')) {
            opened++;
            resolve();
          }
        });
        res.on('end', resolve);
      });
      req.on('error', () => resolve());
      requests.push(req);
    });
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < keys.length) await openOne(keys[next++]!);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const perOpen = (ms: number) => Math.round((ms * 1000) / opened);
  process.stdout.write(
    `${JSON.stringify({ opened, seconds, opensPerSecond: Math.round(opened / seconds), gatewayCpuMicrosPerOpen: perOpen(cpuMsOf(gateway.pid) - gateway0), postgresCpuMicrosPerOpen: perOpen(postgresCpuMs() - postgres0) })}\n`,
  );
} finally {
  for (const req of requests) req.destroy();
  await stopAll();
  await db.query(`DELETE FROM api_keys WHERE name = $1`, [name]).catch(() => undefined);
  await db.end();
}
