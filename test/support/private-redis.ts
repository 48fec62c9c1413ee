// A private redis-server for fault tests (never the shared one).
// `services/main.ts` as a process: ./stack-process.ts.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from '../../shared/embedded.js';

export { freePort };

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

  /** Starts the server unless it runs already (a second one would fail to bind and the first would be lost). */
  async up() {
    if (this.child) return;
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

  /** SIGSTOP: a hung server, not a stopped one (the connection stays open, nothing is answered). */
  pause() {
    this.child?.kill('SIGSTOP');
  }

  resume() {
    this.child?.kill('SIGCONT');
  }

  async down() {
    this.resume();
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
