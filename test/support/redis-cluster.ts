// A local Redis Cluster for tests: six `redis-server --cluster-enabled yes`
// on spare ports (three primaries, a replica each), joined with
// `redis-cli --cluster create`, stopped and removed after. Never the shared Redis.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Cluster, Redis } from 'ioredis';
import { freePort } from '../../shared/embedded.js';

const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise<void>((resolve) => child.once('exit', () => resolve()));

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export class LocalRedisCluster {
  private readonly dir = mkdtempSync(path.join(os.tmpdir(), 'axid-redis-cluster-'));
  readonly nodes = new Map<number, ChildProcess>();
  private constructor(readonly ports: number[]) {}

  /** Starts six nodes and joins them into a cluster whose every slot is served. */
  static async start(size = 6): Promise<LocalRedisCluster> {
    const ports: number[] = [];
    while (ports.length < size) {
      const port = await freePort();
      if (!ports.includes(port)) ports.push(port);
    }
    const c = new LocalRedisCluster(ports);
    try {
      for (const port of ports) c.startNode(port);
      for (const port of ports) await until(`redis on ${port}`, () => c.ask(port, (r) => r.ping()).then((p) => p === 'PONG'));
      await c.run('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '1', '--cluster-yes']);
      await c.healthy();
    } catch (err) {
      await c.stop();
      throw err;
    }
    return c;
  }

  /** `host:port,...` for REDIS_CLUSTER_NODES. */
  get seeds(): string {
    return this.ports.map((p) => `127.0.0.1:${p}`).join(',');
  }

  private startNode(port: number) {
    const nodeDir = mkdtempSync(path.join(this.dir, `n${port}-`));
    const child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '2000', '--save', '', '--appendonly', 'no', '--repl-diskless-sync-delay', '0', '--dir', nodeDir],
      { stdio: 'ignore' },
    );
    this.nodes.set(port, child);
  }

  /** Passwords set by cutOffReplicas. */
  private readonly passwords = new Map<number, string>();

  private async ask<T>(port: number, fn: (r: Redis) => Promise<T>): Promise<T> {
    const password = this.passwords.get(port);
    const r = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, ...(password ? { password } : {}) });
    r.on('error', () => undefined);
    try {
      await r.connect();
      return await fn(r);
    } finally {
      r.disconnect();
    }
  }

  private run(cmd: string, args: string[]): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout!.on('data', (d) => (out += d));
      child.stderr!.on('data', (d) => (out += d));
      child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(' ')} failed (${code}):\n${out}`))));
    });
  }

  /** Resolves once every live node says the cluster is ok and every replica is in sync with its primary. */
  async healthy(timeoutMs = 30_000) {
    await until(
      'the cluster to be ok',
      async () => {
        for (const [port, child] of this.nodes) {
          if (child.exitCode !== null || child.signalCode !== null) continue;
          const info = await this.ask(port, (r) => r.cluster('INFO') as Promise<string>);
          if (!/cluster_state:ok/.test(info)) return false;
          const replication = await this.ask(port, (r) => r.info('replication'));
          if (/role:master/.test(replication) && /slave\d+:.*state=(?!online)/.test(replication)) return false;
          if (/role:slave/.test(replication) && !/master_link_status:up/.test(replication)) return false;
        }
        return true;
      },
      timeoutMs,
    );
  }

  /** The port of the primary that serves a key now. */
  async primaryOf(key: string): Promise<number> {
    // Asked of a node still running (the first may have been killed).
    const port = this.ports.find((p) => !this.isDead(p))!;
    const client = new Cluster([{ host: '127.0.0.1', port }], { lazyConnect: true });
    client.on('error', () => undefined);
    try {
      await client.connect();
      const slots = (await client.cluster('SLOTS')) as unknown as [number, number, [string, number, ...unknown[]], ...unknown[]][];
      const { default: slotOf } = await import('cluster-key-slot');
      const slot = slotOf(key);
      const range = slots.find(([from, to]) => slot >= from && slot <= to);
      if (!range) throw new Error(`no node serves slot ${slot}`);
      return range[2][1];
    } finally {
      client.disconnect();
    }
  }

  private isDead(port: number) {
    const child = this.nodes.get(port);
    return !child || child.exitCode !== null || child.signalCode !== null;
  }

  /** The port of a primary's replica, or null when it has none online. */
  async replicaOf(primary: number): Promise<number | null> {
    const info = await this.ask(primary, (r) => r.info('replication'));
    const m = /slave\d+:ip=[^,]*,port=(\d+),state=online/.exec(info);
    return m ? Number(m[1]) : null;
  }

  /** Resolves once every replica of `primary` has everything it was sent. */
  async replicasCaughtUp(primary: number) {
    await until(`the replicas of ${primary} to catch up`, async () => {
      const info = await this.ask(primary, (r) => r.info('replication'));
      const offset = /master_repl_offset:(\d+)/.exec(info)?.[1];
      const replicas = [...info.matchAll(/slave\d+:.*offset=(\d+)/g)].map((m) => m[1]);
      return replicas.length > 0 && replicas.every((o) => o === offset);
    });
  }

  /**
   * Cuts a primary's replication links and keeps them cut: its replicas fail
   * to authenticate when they reconnect (connections open now stay
   * authenticated). The replicas stay up and known to the cluster, so one is
   * promoted if the primary dies, without what the primary took meanwhile.
   */
  async cutOffReplicas(primary: number) {
    const password = randomBytes(16).toString('hex');
    await this.ask(primary, async (r) => {
      await r.config('SET', 'requirepass', password);
      this.passwords.set(primary, password);
      await r.client('KILL', 'TYPE', 'replica');
    });
  }

  /** A node's CLUSTER NODES. */
  clusterNodes(port: number): Promise<string> {
    return this.ask(port, (r) => r.cluster('NODES') as Promise<string>);
  }

  /** A node's connected_slaves. */
  async connectedReplicas(port: number): Promise<number> {
    return Number(/connected_slaves:(\d+)/.exec(await this.ask(port, (r) => r.info('replication')))?.[1]);
  }

  /** SIGKILLs one node (a primary dies; its replica takes over after the node timeout). */
  async kill(port: number) {
    const child = this.nodes.get(port);
    if (!child) return;
    child.kill('SIGKILL');
    await exited(child);
  }

  async stop() {
    await Promise.all(
      [...this.nodes.values()].map(async (child) => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        await exited(child);
      }),
    );
    this.nodes.clear();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
