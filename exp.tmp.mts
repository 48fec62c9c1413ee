import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { testEnv } from './test/support/stack.ts';
import { processEnv, startProcess } from './test/support/process.ts';

const cpuMs = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
};
const variants = (process.env.VARIANTS ?? 'BASE').split(',');
const key = randomBytes(24).toString('base64url');
const env = testEnv();
const results: Record<string, number[]> = {};
try {
  for (let rep = 0; rep < Number(process.env.REPS ?? 3); rep++) {
    for (const v of variants) {
      const extra: Record<string, string> = { BOOTSTRAP_ADMIN_KEY: key, RATE_LIMIT_POINTS: '100000000', LOG_LEVEL: 'warn', ROLES: 'api,worker' };
      if (v !== 'BASE') for (const kv of v.split('+')) extra[kv] = '1';
      const p = await startProcess(processEnv(env, extra));
      try {
        const h = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
        const ch = await (await fetch(`${p.url}/api/v1/channels`, { method: 'POST', headers: h, body: JSON.stringify({ name: `c${Date.now()}${v.length}` }) })).json();
        const path = `/api/v1/channels/${ch.data.id}/messages`;
        let n = 0;
        const run = (duration: number) =>
          autocannon({ url: p.url, connections: 50, duration, headers: h, requests: [{ method: 'POST', path, setupRequest: (req) => ({ ...req, body: JSON.stringify({ content: `bench message ${n++}: the quick brown fox jumps over the lazy dog` }) }) }] });
        await run(2);
        const before = cpuMs(p.child.pid!);
        const r = await run(6);
        const us = ((cpuMs(p.child.pid!) - before) * 1000) / r['2xx'];
        (results[v] ??= []).push(Math.round(us));
        console.log(v, 'rps', Math.round(r['2xx'] / 6), 'cpu µs/req', Math.round(us), 'non2xx', r.non2xx);
      } finally {
        await p.stop();
      }
    }
  }
} finally {
  await env.cleanup();
}
for (const [v, xs] of Object.entries(results)) console.log(v.padEnd(30), xs.sort((a, b) => a - b).join(' '), 'median', xs[Math.floor(xs.length / 2)]);
