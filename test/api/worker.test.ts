import { expect } from 'chai';
import { Queue } from 'bullmq';
import { handlers as realHandlers } from '../../services/core/jobs.js';
import { startWorker } from '../../services/worker/worker.js';
import { startStack, type Stack } from '../../services/stack.js';
import { enqueue, jobId, QUEUE_NAME, queuePrefix, type JobHandlers } from '../../shared/jobs.js';
import { createLogger } from '../../shared/logger.js';
import { expectOk } from '../support/expect.js';
import { uploadFile, waitFor } from '../support/files.js';
import { newWorkspace, testEnv } from '../support/stack.js';
import { busEvents } from '../support/bus.js';

// A stack without the worker role: each test runs the worker it needs.
describe('the worker', function () {
  this.timeout(60_000);
  let s: Stack;
  let env: ReturnType<typeof testEnv>;
  let queue: Queue;
  const workers: { close(): Promise<void> }[] = [];

  before(async () => {
    env = testEnv({ ROLES: 'api' });
    s = await startStack(env.config, createLogger(env.config.logLevel));
    queue = new Queue(QUEUE_NAME, { connection: s.rt.redis, prefix: queuePrefix(s.rt.config) });
  });
  beforeEach(async () => {
    await queue.obliterate({ force: true }); // no job of an earlier test is left
  });
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.close();
  });
  after(async () => {
    await queue?.close();
    await s?.close();
    await env?.cleanup();
  });

  const redisUrl = () => s.rt.config.redisUrl;

  async function fileReadyEvents(fileId: string) {
    return (await busEvents(s)).filter((e) => e.type === 'file.ready' && e.data.file.id === fileId);
  }

  async function uploaded() {
    const ws = await newWorkspace(s);
    const up = await uploadFile(s.url, { key: ws.ownerKey, data: Buffer.from('worker test bytes') });
    return { ws, id: expectOk(up, 201).data.id as string, sha256: up.sha256 };
  }

  const processed = (id: string) =>
    waitFor(async () => {
      const row = await s.rt.db('files').where({ id }).first();
      return row.status !== 'processing' ? row : undefined;
    }, `file ${id} processed`);

  it('refuses to boot when a job has no handler, or a handler has no job', async () => {
    const { 'webhook.render': _omitted, ...partial } = realHandlers;
    const bootError = (handlers: JobHandlers) =>
      startWorker(s.rt, { redisUrl: redisUrl(), handlers }).then(
        () => 'booted',
        (e: Error) => e.message,
      );
    expect(await bootError(partial as JobHandlers)).to.match(/no handler for job\(s\) webhook\.render/);
    const extra = { ...realHandlers, 'mystery.job': realHandlers['file.postprocess'] } as JobHandlers;
    expect(await bootError(extra)).to.match(/unknown job\(s\) mystery\.job/);
  });

  it('makes a second enqueue of the same job a no-op (deterministic job id)', async () => {
    const { id } = await uploaded(); // the API enqueued it once; no worker runs
    await enqueue(s.rt, 'file.postprocess', { fileId: id });
    await enqueue(s.rt, 'file.postprocess', { fileId: id });
    const jobs = await queue.getJobs(['waiting', 'active', 'completed', 'delayed', 'prioritized']);
    expect(jobs.filter((j) => j.id === jobId('file.postprocess', { fileId: id }))).to.have.length(1);
  });

  it('retries a job whose first attempt crashed after doing its work, and the work happens once', async () => {
    const { id, sha256 } = await uploaded();
    const attempts: number[] = [];
    const handlers: JobHandlers = {
      ...realHandlers,
      'file.postprocess': async (rt, payload, job) => {
        if (payload.fileId === id) attempts.push(job.attempt);
        await realHandlers['file.postprocess'](rt, payload, job);
        if (payload.fileId === id && job.attempt === 1) throw new Error('simulated crash after the work was done');
      },
    };
    workers.push(await startWorker(s.rt, { redisUrl: redisUrl(), handlers }));
    const row = await processed(id);
    expect(row).to.include({ status: 'ready', sha256 });
    await waitFor(async () => attempts.length >= 2 && (await queue.getJob(jobId('file.postprocess', { fileId: id })))?.finishedOn, 'the retry to finish');
    expect(attempts).to.deep.equal([1, 2]);
    const events = await waitFor(async () => {
      const found = await fileReadyEvents(id);
      return found.length ? found : undefined;
    }, 'file.ready');
    expect(events).to.have.length(1);
  });

  it('closes with a job that never ends once the grace period is over, and the next worker picks the job up: its effect happens once', async () => {
    const { id, sha256 } = await uploaded();
    let started!: () => void;
    const inFlight = new Promise<void>((r) => (started = r));
    const stuck: JobHandlers = {
      ...realHandlers,
      'file.postprocess': async () => {
        started();
        await new Promise(() => undefined); // the process "dies" here
      },
    };
    const first = await startWorker(s.rt, { redisUrl: redisUrl(), handlers: stuck, lockDuration: 1000, stalledInterval: 500, closeGraceMs: 300 });
    await inFlight;
    // BullMQ's own close waits for the job without end (services/worker/close.ts);
    // ours lets go after the grace period, and the lock is no longer renewed.
    await first.close();

    workers.push(await startWorker(s.rt, { redisUrl: redisUrl(), lockDuration: 1000, stalledInterval: 500 }));
    const row = await processed(id);
    expect(row).to.include({ status: 'ready', sha256 });
    const events = await waitFor(async () => {
      const found = await fileReadyEvents(id);
      return found.length ? found : undefined;
    }, 'file.ready');
    expect(events).to.have.length(1);
  });

  it('finishes the job in flight on close', async () => {
    const { id } = await uploaded();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let entered!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    const slow: JobHandlers = {
      ...realHandlers,
      'file.postprocess': async (rt, payload, job) => {
        entered();
        await gate;
        await realHandlers['file.postprocess'](rt, payload, job);
      },
    };
    const w = await startWorker(s.rt, { redisUrl: redisUrl(), handlers: slow });
    await inside;
    const closing = w.close();
    release();
    await closing;
    expect((await s.rt.db('files').where({ id }).first()).status).to.equal('ready');
  });
});
