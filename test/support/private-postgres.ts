// A PostgreSQL server of our own on a spare port, for fault tests that stop
// and restart the database (never the machine's shared server). Postgres
// refuses to run as root: as root, the server runs as the `postgres` user.
import { execFile } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../shared/embedded.js';

const run = promisify(execFile);

function binDir(): string {
  const versions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a));
  if (versions.length === 0) throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql');
  return `/usr/lib/postgresql/${versions[0]}/bin`;
}

export class PrivatePostgres {
  private readonly bin = binDir();
  private readonly asRoot = process.getuid?.() === 0;
  private running = false;
  private paused: number[] = [];

  private constructor(
    readonly port: number,
    private readonly dir: string,
  ) {}

  private static async create(): Promise<PrivatePostgres> {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'axid-pg-'));
    const pg = new PrivatePostgres(await freePort(), dir);
    if (pg.asRoot) {
      chmodSync(dir, 0o700);
      const { stdout } = await run('id', ['-u', 'postgres']);
      const { stdout: gid } = await run('id', ['-g', 'postgres']);
      chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
    }
    return pg;
  }

  static async start(): Promise<PrivatePostgres> {
    const pg = await PrivatePostgres.create();
    await pg.exec('initdb', ['-D', pg.data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
    await pg.up();
    return pg;
  }

  /**
   * A streaming replica of `primary` (pg_basebackup -R: a copy of its data
   * folder that follows its WAL), on a spare port of its own. initdb's
   * defaults (wal_level replica, trust for replication from 127.0.0.1) allow it.
   */
  static async replicaOf(primary: PrivatePostgres): Promise<PrivatePostgres> {
    const pg = await PrivatePostgres.create();
    await pg.exec('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', pg.data, '-R', '-X', 'stream', '--no-sync']);
    await pg.up();
    return pg;
  }

  get data() {
    return path.join(this.dir, 'data');
  }

  /** A URL for database `name` on this server. */
  url(name: string) {
    return `postgres://postgres@127.0.0.1:${this.port}/${name}`;
  }

  private exec(tool: string, args: string[]) {
    const file = path.join(this.bin, tool);
    return this.asRoot ? run('runuser', ['-u', 'postgres', '--', file, ...args]) : run(file, args);
  }

  async up() {
    const options = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50`;
    await this.exec('pg_ctl', ['start', '-w', '-D', this.data, '-l', path.join(this.dir, 'log'), '-o', options]);
    this.running = true;
  }

  /** Stops the server at once (fast shutdown: open sessions are terminated, 57P01). */
  async down() {
    if (!this.running) return;
    await this.exec('pg_ctl', ['stop', '-w', '-m', 'fast', '-D', this.data]);
    this.running = false;
  }

  /** Every process of the server (postmaster and backends): open sockets stay, nothing answers. */
  private async pids(): Promise<number[]> {
    const postmaster = Number(readFileSync(path.join(this.data, 'postmaster.pid'), 'utf8').split('\n')[0]);
    const { stdout } = await run('pgrep', ['-P', String(postmaster)]).catch(() => ({ stdout: '' }));
    return [postmaster, ...stdout.split('\n').filter(Boolean).map(Number)];
  }

  /** SIGSTOP: a hung server, not a stopped one (connections stay open, nothing is answered). */
  async pause() {
    this.paused = await this.pids();
    for (const pid of this.paused) process.kill(pid, 'SIGSTOP');
  }

  /** SIGCONT to every process paused, and to any forked since (there should be none). */
  async resume() {
    const pids = this.paused;
    this.paused = [];
    for (const pid of pids) process.kill(pid, 'SIGCONT');
  }

  async stop() {
    await this.resume().catch(() => undefined);
    await this.down().catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
