// The roles as separate processes, as they run in production: the API alone
// (its memory read from /proc while 100 MB stream through it) and the API and
// the worker in two processes sharing Postgres, Redis and S3.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { freePort } from '../../shared/embedded.js';
import { Client } from '../support/client.js';
import { expectOk } from '../support/expect.js';
import { uploadFile, waitFor } from '../support/files.js';
import { stack, testEnv } from '../support/stack.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const MB = 1024 * 1024;

interface Role {
  child: ChildProcess;
  url: string;
  output(): string;
  stop(): Promise<void>;
}

/** The storage of the run's shared stack (the embedded S3 server), for every child. */
async function s3Endpoint(): Promise<string> {
  const provider = stack().rt.s3.config.endpoint as unknown as () => Promise<{ protocol: string; hostname: string; port?: number }>;
  const ep = await provider();
  return `${ep.protocol}//${ep.hostname}:${ep.port}`;
}

/**
 * `tsx services/main.ts` with ROLES set, as one process (node --import tsx, the
 * same loader `npx tsx` uses, without a wrapper process: the pid is the role's).
 */
async function startRole(env: ReturnType<typeof testEnv>, roles: string): Promise<Role> {
  const port = await freePort();
  const c = env.config;
  const child = spawn(process.execPath, ['--import', 'tsx', 'services/main.ts'], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      ROLES: roles,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: c.databaseUrl,
      REDIS_URL: c.redisUrl,
      REDIS_KEY_PREFIX: c.redisKeyPrefix,
      S3_ENDPOINT: await s3Endpoint(),
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
      S3_BUCKET: c.s3.bucket,
      DATA_DIR: c.dataDir,
      BOOTSTRAP_ADMIN_KEY: c.bootstrapAdminKey,
      LOG_LEVEL: 'warn',
      RATE_LIMIT_POINTS: '100000',
    },
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`ROLES=${roles} exited: ${output}`);
      return fetch(`${url}/readyz`).then((r) => r.ok).catch(() => false);
    },
    `ROLES=${roles} to be ready`,
    40_000,
  );
  return {
    child,
    url,
    output: () => output,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 12_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * How many of `count` connections to `port` the kernel completes within
 * `withinMs` (a connection past a full listen queue is not answered: its
 * SYN is dropped and sent again 1, 3, 7 s later, each time dropped again
 * while the queue stays full).
 */
async function connectionsCompleted(port: number, count: number, withinMs: number): Promise<number> {
  const sockets: net.Socket[] = [];
  let completed = 0;
  try {
    await new Promise<void>((resolve) => {
      const deadline = setTimeout(resolve, withinMs);
      for (let i = 0; i < count; i++) {
        const socket = net.connect({ port, host: '127.0.0.1' }, () => {
          if (++completed === count) {
            clearTimeout(deadline);
            resolve();
          }
        });
        socket.on('error', () => undefined);
        sockets.push(socket);
      }
    });
  } finally {
    for (const socket of sockets) socket.destroy();
  }
  return completed;
}

/** Peak resident set size of a process, in bytes (Linux). */
function peakRss(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error('no VmHWM in /proc status');
  return Number(match[1]) * 1024;
}

describe('roles in separate processes', function () {
  this.timeout(120_000);
  let env: ReturnType<typeof testEnv>;
  const started: Role[] = [];

  beforeEach(() => {
    env = testEnv();
  });
  afterEach(async () => {
    for (const role of started.splice(0).reverse()) await role.stop();
    await env.cleanup();
  });

  // The bound proves streaming: a buffered 100 MB upload holds at least 100 MB.
  // It cannot be V8's own threshold: socket chunks are external memory, which
  // V8 collects once 64 MB of it has piled up since the last collection
  // (its external allocation soft limit), so a streaming upload peaks anywhere
  // from about 35 to 66 MB above its start (measured alone and in full runs).
  it('streams a 100 MB upload through the API while its peak RSS grows by less than 80 MB', async () => {
    const api = await startRole(env, 'api');
    started.push(api);
    const key = env.config.bootstrapAdminKey!;
    // warm up: the upload code path is loaded and has run once
    expectOk(await uploadFile(api.url, { key, size: 2 * MB }), 201);
    const before = peakRss(api.child.pid!);
    const up = await uploadFile(api.url, { key, size: 100 * MB, contentLength: false });
    expect(expectOk(up, 201).data.size).to.equal(100 * MB);
    const grown = peakRss(api.child.pid!) - before;
    expect(grown, `peak RSS grew by ${(grown / MB).toFixed(1)} MB`).to.be.below(80 * MB);
  });

  // Every stream of a restarted gateway comes back at once, while its loop is
  // busy: the kernel holds the connections in the listen queue until they are
  // accepted. The role is stopped here, so it accepts none, and every
  // connection must fit in the queue (node's default of 511 would leave 689
  // of them unanswered until it runs again).
  it('holds 1,200 connections that arrive while the gateway accepts none in its listen queue', async () => {
    const connections = 1_200;
    const somaxconn = Number(readFileSync('/proc/sys/net/core/somaxconn', 'utf8'));
    expect(somaxconn, 'net.core.somaxconn, which caps every listen queue').to.be.at.least(connections);
    const gateway = await startRole(env, 'gateway');
    started.push(gateway);
    gateway.child.kill('SIGSTOP');
    try {
      expect(await connectionsCompleted(Number(new URL(gateway.url).port), connections, 5_000)).to.equal(connections);
    } finally {
      gateway.child.kill('SIGCONT');
    }
    expect((await fetch(`${gateway.url}/healthz`)).status).to.equal(200);
  });

  it('runs ROLES=api and ROLES=worker as two processes: an upload to the one becomes ready through the other', async () => {
    const api = await startRole(env, 'api');
    started.push(api);
    const worker = await startRole(env, 'worker');
    started.push(worker);
    const key = env.config.bootstrapAdminKey!;
    const up = await uploadFile(api.url, { key, data: Buffer.from('split roles'), name: 'split.txt', type: 'text/plain' });
    const id = expectOk(up, 201).data.id;
    const client = new Client(api.url, key);
    const file = await waitFor(async () => {
      const res = await client.get(`/api/v1/files/${id}`);
      return res.body.data.status === 'ready' ? res.body.data : undefined;
    }, 'the worker process to make the file ready');
    expect(file.sha256).to.equal(up.sha256);
    // the worker role serves only the operational endpoints
    expect((await fetch(`${worker.url}/healthz`)).status).to.equal(200);
    expect((await fetch(`${worker.url}/api/v1/files/${id}`)).status).to.equal(404);
  });
});
