// Runs `services/main.ts` as a child process, as `npm start` does.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../shared/embedded.js';
import { clusterNodesOf } from '../../shared/redis.js';
import type { TestEnv } from './stack.js';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The environment that points a process at a test run's database, Redis prefix and data folder. */
export const processEnv = (env: TestEnv, extra: Record<string, string> = {}): Record<string, string> => ({
  DATABASE_URL: env.config.databaseUrl,
  // A test cluster (test/support/stack.ts): its nodes, and the stack's shards.
  ...(env.config.redisCluster
    ? {
        REDIS_CLUSTER_NODES: clusterNodesOf(env.config.redisUrl)!.map((n) => `${n.host}:${n.port}`).join(','),
        EVENT_SHARDS: String(env.config.eventShards),
      }
    : { REDIS_URL: env.config.redisUrl }),
  REDIS_KEY_PREFIX: env.config.redisKeyPrefix,
  DATA_DIR: env.dataDir,
  ...extra,
});

export interface RunningProcess {
  child: ChildProcess;
  url: string;
  port: number;
  output(): string;
  /** SIGTERM and wait for the exit; resolves the exit code. */
  stop(): Promise<number | null>;
}

/** The child could not listen: its port, found free, was taken before it bound it. */
class PortTaken extends Error {}

export async function startProcess(env: Record<string, string>, o: { port?: number } = {}): Promise<RunningProcess> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(env, o.port ?? (await freePort()));
    } catch (err) {
      // Two starts at once can be handed the same free port; the one that loses picks another.
      if (err instanceof PortTaken && o.port === undefined && attempt < 5) continue;
      throw err;
    }
  }
}

async function startOnce(env: Record<string, string>, port: number): Promise<RunningProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'services/main.ts'], {
    cwd: repoRoot,
    env: { ...process.env, HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) {
      const early = `process exited early (${child.exitCode}):\n${out}`;
      throw /EADDRINUSE/.test(out) ? new PortTaken(early) : new Error(early);
    }
    const ready = await fetch(`${url}/readyz`).then((r) => r.status === 200).catch(() => false);
    if (ready) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`process not ready in 30 s:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    url,
    port,
    output: () => out,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
