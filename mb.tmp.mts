import { createMetrics } from './shared/metrics.ts';
const m = createMetrics();
const N = 200000;
let t = process.hrtime.bigint();
for (let i = 0; i < N; i++) {
  const labels = { method: 'POST', route: '/api/v1/channels/{channel_id}/messages', status: '201' };
  m.httpRequests.inc(labels);
  m.httpDuration.observe(labels, 0.002 + (i % 10) / 1000);
}
console.log('metrics µs/req', Number(process.hrtime.bigint() - t) / 1000 / N);
const { createHash, randomUUID } = await import('node:crypto');
t = process.hrtime.bigint();
for (let i = 0; i < N; i++) createHash('sha256').update('axid_' + 'x'.repeat(43)).digest('hex');
console.log('sha256 µs', Number(process.hrtime.bigint() - t) / 1000 / N);
t = process.hrtime.bigint();
for (let i = 0; i < N; i++) randomUUID();
console.log('uuid µs', Number(process.hrtime.bigint() - t) / 1000 / N);
