// Scheduled messages across a worker crash (contract §14, docs/team-chat.md):
// a ROLES=worker process is SIGKILLed while messages fall due around it, some
// mid-post; a second worker takes over (delayed jobs still queued, and the
// killed one's running jobs once their lock lapses). Every scheduled message
// is posted exactly once: a job run again finds its row sent and posts nothing.
import { expect } from 'chai';
import { startStack, type Stack } from '../../services/stack.js';
import { createLogger } from '../../shared/logger.js';
import { serverLevels } from '../support/client.js';
import { expectOk } from '../support/expect.js';
import { waitFor } from '../support/files.js';
import { processEnv, startProcess, type RunningProcess } from '../support/stack-process.js';
import { deleteRedisKeys, newWorkspace, testEnv, uniqueName, type TestEnv } from '../support/stack.js';

const SETTINGS = { FEATURE_LEVEL: '3', SCHEDULE_MIN_LEAD_SECONDS: '1', JOB_RECONCILE_AFTER: '1' };

describe('scheduled messages when the worker is SIGKILLed around their time', function () {
  this.timeout(120_000);
  let env: TestEnv;
  let api: Stack;
  const workers: RunningProcess[] = [];

  before(async () => {
    env = testEnv({ ...SETTINGS, ROLES: 'api' });
    api = await startStack(env.config, createLogger(env.config.logLevel));
    serverLevels.set(api.url, '3');
  });
  after(async () => {
    for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) await w.stop();
    serverLevels.delete(api?.url);
    await api?.close();
    await env?.cleanup();
  });

  const startWorkerProcess = async () => {
    const w = await startProcess(processEnv(env, { ...SETTINGS, ROLES: 'worker', MIGRATE_ON_START: 'false', LOG_LEVEL: 'warn' }));
    workers.push(w);
    return w;
  };

  it('posts each one once', async () => {
    const ws = await newWorkspace(api);
    const channelId = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('c') }), 201).data.id as string;
    const first = await startWorkerProcess();

    // 30 messages due every 100 ms from 3 s on; the worker dies 1.5 s into them.
    const start = Date.now() + 3000;
    const scheduled: string[] = [];
    for (let i = 0; i < 30; i++) {
      const at = new Date(start + i * 100).toISOString();
      scheduled.push(expectOk(await ws.owner.post(`/api/v1/channels/${channelId}/messages`, { content: `due ${i}`, send_at: at }), 202).data.id);
    }
    await waitFor(async () => Date.now() >= start + 1500, 'the middle of the due times', 10_000);
    const sentBefore = Number((await api.rt.db('scheduled_messages').whereIn('id', scheduled).where({ status: 'sent' }).count('* as n').first())?.n);
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));
    expect(sentBefore, 'some were posted before the crash').to.be.greaterThan(0);

    await startWorkerProcess();
    const rows = await waitFor(async () => {
      const all = await api.rt.db('scheduled_messages').whereIn('id', scheduled);
      return all.every((r) => r.status === 'sent') ? all : undefined;
    }, 'every scheduled message to be sent', 60_000);
    const messages = await api.rt.db('messages').where({ channel_id: channelId }).select('id', 'content', 'author_id');
    expect(messages).to.have.length(30);
    expect(new Set(messages.map((m) => m.content)).size).to.equal(30);
    expect(messages.every((m) => m.author_id === ws.ownerId)).to.equal(true);
    expect(new Set(rows.map((r) => r.message_id))).to.deep.equal(new Set(messages.map((m) => m.id)));
  });

  it('posts one whose delayed job Redis lost, found again in Postgres once overdue', async () => {
    for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) await w.stop();
    const ws = await newWorkspace(api);
    const channelId = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('c') }), 201).data.id as string;
    const created = expectOk(await ws.owner.post(`/api/v1/channels/${channelId}/messages`, { content: 'lost job', send_at: new Date(Date.now() + 1500).toISOString() }), 202).data;
    // The delayed job reached Redis (the outbox is empty), then Redis loses it.
    await waitFor(async () => Number((await api.rt.db('job_outbox').count('* as n').first())?.n) === 0, 'the job to be enqueued');
    await deleteRedisKeys(`${env.config.redisKeyPrefix}`);
    await startWorkerProcess();
    const row = await waitFor(async () => {
      const r = await api.rt.db('scheduled_messages').where({ id: created.id }).first();
      return r?.status === 'sent' ? r : undefined;
    }, 'the scheduled message to be sent', 30_000);
    expect(await api.rt.db('messages').where({ channel_id: channelId }).pluck('id')).to.deep.equal([row.message_id]);
  });
});
