// Jobs go through Postgres (the job outbox, shared/job-outbox.ts): with Redis
// down an upload and a compatible webhook post answer at once and their jobs
// run once Redis is back; with Redis wiped, the worker finds the unfinished
// work in Postgres and enqueues it again (services/worker/reconcile.ts).
// Runs its own redis-server, stopped, started and wiped here.
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { startStack, type Stack } from '../../services/stack.js';
import { startWorker } from '../../services/worker/worker.js';
import { createLogger } from '../../shared/logger.js';
import { Client } from '../support/client.js';
import { expectError, expectOk } from '../support/expect.js';
import { uploadFile, waitFor } from '../support/files.js';
import { PrivateRedis } from '../support/private-redis.js';
import { newWorkspace, testEnv, uniqueName, type TestEnv, type TestWorkspace } from '../support/stack.js';

describe('jobs recorded in Postgres (job outbox)', function () {
  this.timeout(90_000);
  let redis: PrivateRedis;
  let env: TestEnv;
  let s: Stack;
  let redisDown = false;
  const workers: { close(): Promise<void> }[] = [];

  // No worker role: each test starts the worker when it wants jobs to run.
  before(async () => {
    redis = await PrivateRedis.start();
    env = testEnv({ REDIS_URL: redis.url, ROLES: 'api', JOB_RECONCILE_AFTER: '1' });
    s = await startStack(env.config, createLogger(env.config.logLevel));
  });

  afterEach(async () => {
    for (const w of workers.splice(0)) await w.close();
  });

  after(async () => {
    if (redisDown) await redis.up(); // a clean close needs Redis
    await s?.close();
    await env?.cleanup();
    await redis?.stop();
  });

  const jobsWaiting = async () => Number((await s.rt.db('job_outbox').count('* as n').first())?.n);
  const fileStatus = async (id: string) => (await s.rt.db('files').where({ id }).first()).status as string;

  async function compatHook(ws: TestWorkspace) {
    const [channel] = await s.rt
      .db('channels')
      .insert({ workspace_id: ws.workspaceId, name: uniqueName('ch'), created_by: ws.ownerId })
      .returning('id');
    await s.rt.db('channel_members').insert({ channel_id: channel.id, user_id: ws.ownerId, workspace_id: ws.workspaceId });
    const hook = expectOk(await ws.owner.post('/api/v1/webhooks/incoming', { channel_id: channel.id, name: 'CI' }), 201).data as { id: string };
    return { id: hook.id, channelId: channel.id as string };
  }

  it('answers an upload and a compatible webhook post while Redis is down; their jobs run once it is back', async () => {
    const ws = await newWorkspace(s);
    const hook = await compatHook(ws);
    const anon = new Client(s.url);

    await redis.down();
    redisDown = true;
    const up = await uploadFile(s.url, { key: ws.ownerKey, data: Buffer.from('bytes uploaded while Redis is down') });
    const fileId = expectOk(up, 201).data.id as string;
    const posted = await anon.post(`/hooks/compat/${hook.id}`, { text: 'deploy', attachments: [{ fallback: 'fb', title: 'While down' }] });
    expect(posted.status, posted.text).to.equal(200);
    expect(await jobsWaiting()).to.equal(2);
    expect((await anon.get('/readyz')).status).to.equal(503);
    // Typing keeps nothing: refused at once rather than left waiting for Redis.
    const typing = await ws.owner.post(`/api/v1/channels/${hook.channelId}/typing`);
    expectError(typing, 503, 'service_unavailable');
    expect(typing.headers.get('retry-after')).to.match(/^[1-9]\d*$/);

    await redis.up();
    redisDown = false;
    workers.push(await startWorker(s.rt, { redisUrl: redis.url }));
    await waitFor(async () => (await fileStatus(fileId)) === 'ready', 'the file to be processed', 30_000);
    const message = await waitFor(async () => {
      const [m] = await s.rt.db('messages').where({ webhook_id: hook.id });
      return m?.content_json ? m : undefined;
    }, 'the attachment to render', 30_000);
    expect(message.content).to.contain('While down');
    expect(await jobsWaiting()).to.equal(0);
  });

  it('enqueues again, from Postgres, the jobs Redis lost when it was wiped', async () => {
    const ws = await newWorkspace(s);
    const hook = await compatHook(ws);
    const up = await uploadFile(s.url, { key: ws.ownerKey, data: Buffer.from('bytes whose job is wiped') });
    const fileId = expectOk(up, 201).data.id as string;
    const posted = await new Client(s.url).post(`/hooks/compat/${hook.id}`, { attachments: [{ fallback: 'fb', title: 'Wiped' }] });
    expect(posted.status, posted.text).to.equal(200);
    // Both jobs reached the queue, then the queue is gone.
    await waitFor(async () => (await jobsWaiting()) === 0, 'the jobs to be enqueued');
    const admin = new Redis(redis.url);
    try {
      await admin.flushall();
    } finally {
      admin.disconnect();
    }

    workers.push(await startWorker(s.rt, { redisUrl: redis.url }));
    await waitFor(async () => (await fileStatus(fileId)) === 'ready', 'the file to be processed', 30_000);
    await waitFor(async () => {
      const [m] = await s.rt.db('messages').where({ webhook_id: hook.id });
      return m?.content_json ? m : undefined;
    }, 'the attachment to render', 30_000);
  });
});
