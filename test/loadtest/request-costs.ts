// `tsx test/loadtest/request-costs.ts`: what one request of each kind the
// loadtest makes costs Axid's API process and PostgreSQL, on the
// ten-million-message set (test/bench/dataset, built by `npm run loadtest`
// or `npm run bench`). One api,worker process, autocannon with 4 connections
// for 10 s per kind, the keys of 50 of the set's users, `accept-encoding:
// gzip` as the load generator asks; CPU from /proc (the API process's own,
// and the database's backends). REQUEST_COSTS_ONLY=a,b runs only those
// kinds; REQUEST_COSTS_CPU_PROF=<dir> writes the API's --cpu-prof there.
import autocannon from 'autocannon';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../../shared/embedded.js';
import { cpuMsOf, spawnNode, stopAll, waitReady } from '../bench/lib/proc.js';
import { pgCost, pgMark } from '../bench/lib/pgcost.js';
import { insertKeys } from './setup.js';

const databaseUrl = `postgres://postgres@127.0.0.1:${process.env.LOADTEST_PG_PORT ?? 5432}/${process.env.LOADTEST_DATABASE ?? 'axid_bench_10m'}`;
const only = (process.env.REQUEST_COSTS_ONLY ?? '').split(',').filter(Boolean);
const cpuProf = process.env.REQUEST_COSTS_CPU_PROF;
const keyName = `request-costs-${process.pid}`;

const db = new pg.Client({ connectionString: databaseUrl });
await db.connect();
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'axid-request-costs-'));
try {
  const { rows: users } = await db.query<{ id: string; workspace_id: string; channels: string[] }>(
    `SELECT u.id, u.workspace_id, array_agg(cm.channel_id) AS channels
       FROM (SELECT id, workspace_id, seq FROM users ORDER BY seq LIMIT 50) u JOIN channel_members cm ON cm.user_id = u.id GROUP BY 1, 2`,
  );
  const keys = await insertKeys(db, users.map((u) => u.id), keyName);
  const port = await freePort();
  const api = spawnNode('axid-api', 'services/main.ts', {
    nodeFlags: cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${cpuProf}`] : [],
    env: {
      DATABASE_URL: databaseUrl,
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_KEY_PREFIX: `axidcosts:${process.pid}:`,
      HOST: '127.0.0.1',
      PORT: String(port),
      ROLES: 'api,worker',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_POINTS: '1000000000',
      MIGRATE_ON_START: 'false',
      DATA_DIR: dataDir,
    },
  });
  const url = `http://127.0.0.1:${port}`;
  await waitReady(api, `${url}/readyz`, 60_000);
  // Each user asks for its own conversations; the cursor page and the permalink are of the first user's sixth.
  const first = users[0]!;
  const sample = (await (await fetch(`${url}/api/v1/channels/${first.channels[5]}/messages?limit=50`, { headers: { authorization: `Bearer ${keys[0]!}` } })).json()) as {
    data: { id: string }[];
    pagination: { next_cursor: string };
  };
  // i: the request's number; u: its user's (i % users), so that each user asks for one of its own conversations.
  const kinds: Record<string, (i: number, u: number) => string> = {
    'newest page (SwitchChannel)': (i, u) => `/api/v1/channels/${users[u]!.channels[Math.floor(i / users.length) % users[u]!.channels.length]}/messages?limit=50`,
    'page by cursor (ScrollChannel)': () => `/api/v1/channels/${first.channels[5]}/messages?limit=50&cursor=${sample.pagination.next_cursor}`,
    'channel list (UnreadCheck)': () => '/api/v1/channels?limit=100',
    'DMs (OpenDirectOrGroupChannel)': () => '/api/v1/dms?limit=50',
    'one message (ClickPermalink)': () => `/api/v1/channels/${first.channels[5]}/messages/${sample.data[3]!.id}`,
    'users (SearchUsers)': () => '/api/v1/users?limit=50',
  };
  process.stdout.write('| request (loadtest action) | req/s | API µs a request | PostgreSQL µs a request |\n|---|---:|---:|---:|\n');
  for (const [name, pathOf] of Object.entries(kinds)) {
    if (only.length && !only.some((o) => name.includes(o))) continue;
    const api0 = cpuMsOf(api.pid);
    const pg0 = await pgMark(db);
    let n = 0;
    const result = await autocannon({
      url,
      connections: 4,
      duration: 10,
      headers: { 'accept-encoding': 'gzip' },
      requests: [
        {
          method: 'GET',
          setupRequest: (req) => {
            const i = n++ % (users.length * 13);
            const u = i % users.length;
            return { ...req, path: pathOf(i, u), headers: { ...req.headers, authorization: `Bearer ${keys[u]!}` } };
          },
        },
      ],
    });
    const total = result.requests.total;
    const apiUs = ((cpuMsOf(api.pid) - api0) * 1000) / total;
    const pgUs = ((await pgCost(db, pg0)).cpuMs * 1000) / total;
    process.stdout.write(`| ${name} | ${(total / result.duration).toFixed(0)} | ${apiUs.toFixed(0)} | ${pgUs.toFixed(0)} |${result.non2xx ? ` (${result.non2xx} not 2xx)` : ''}\n`);
  }
} finally {
  await stopAll();
  await db.query('DELETE FROM api_keys WHERE name = $1', [keyName]).catch(() => undefined);
  await db.end();
  rmSync(dataDir, { recursive: true, force: true });
}
