// Helpers for tests that run real processes: free ports, a private
// redis-server, and `services/main.ts` started with a role.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise<void>((resolve) => child.once('exit', () => resolve()));

/** A redis-server of our own (never the shared one), without persistence. */
export class PrivateRedis {
  private child: ChildProcess | null = null;
  private readonly dir = mkdtempSync(path.join(os.tmpdir(), 'axid-redis-'));
  private constructor(readonly port: number) {}

  static async start(): Promise<PrivateRedis> {
    const r = new PrivateRedis(await freePort());
    await r.up();
    return r;
  }

  get url() {
    return `redis://127.0.0.1:${this.port}`;
  }

  async up() {
    this.child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.dir], {
      stdio: 'ignore',
    });
    await until(`redis on ${this.port}`, async () => {
      const probe = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      probe.on('error', () => undefined);
      try {
        await probe.connect();
        return (await probe.ping()) === 'PONG';
      } finally {
        probe.disconnect();
      }
    });
  }

  async down() {
    const child = this.child;
    this.child = null;
    if (!child) return;
    child.kill('SIGTERM');
    await exited(child);
  }

  async stop() {
    await this.down();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** `services/main.ts` in its own process with the given environment. */
export class AxidProcess {
  private constructor(
    readonly child: ChildProcess,
    readonly url: string,
    private readonly dataDir: string,
  ) {}

  static async start(env: Record<string, string>): Promise<AxidProcess> {
    const port = await freePort();
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'axid-proc-'));
    const child = spawn(path.resolve('node_modules/.bin/tsx'), ['services/main.ts'], {
      env: { ...process.env, LOG_LEVEL: 'silent', HOST: '127.0.0.1', PORT: String(port), DATA_DIR: dataDir, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const url = `http://127.0.0.1:${port}`;
    const p = new AxidProcess(child, url, dataDir);
    try {
      await until(`${env.ROLES} on ${port}`, async () => {
        if (child.exitCode !== null) throw new Error(`exited: ${stderr}`);
        return (await fetch(`${url}/readyz`)).status === 200;
      }, 40_000);
    } catch (err) {
      await p.stop();
      throw new Error(`${(err as Error).message} ${stderr}`);
    }
    return p;
  }

  async stop() {
    this.child.kill('SIGTERM');
    await exited(this.child);
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}
