// EMBEDDED=off (infra/Dockerfile, infra/docker-compose.yml, k8s/base): a start
// whose database, Redis or S3 store is missing exits with a message naming the
// variable (shared/embedded.ts) and starts no embedded stand-in.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { freePort } from '../../shared/embedded.js';
import { repoRoot } from '../support/stack-process.js';

/** Runs services/main.ts to its exit; resolves the exit code and everything it printed. */
function startToExit(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'services/main.ts'], {
    cwd: repoRoot,
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', EMBEDDED: 'off', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000); // a start that does not exit fails below, never hangs
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    }),
  );
}

describe('EMBEDDED=off', function () {
  this.timeout(60_000);
  let dataDir: string;
  let closedPort: number;
  // Reachable stores: the machine's Postgres and Redis (nothing is written: the start stops before connecting).
  const reachable = { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres', REDIS_URL: 'redis://127.0.0.1:6379' };

  beforeEach(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'axid-embedded-off-'));
    closedPort = await freePort();
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  const startsNothing = () => {
    for (const store of ['pg', 'redis', 's3']) expect(existsSync(path.join(dataDir, store)), `${store} stand-in`).to.equal(false);
  };

  it('exits naming DATABASE_URL when the database does not answer', async () => {
    const { code, output } = await startToExit({ ...reachable, DATA_DIR: dataDir, DATABASE_URL: `postgres://postgres@127.0.0.1:${closedPort}/axid` });
    expect(code).to.equal(1);
    expect(output).to.match(/axid: PostgreSQL does not answer at 127\.0\.0\.1:\d+ \(DATABASE_URL is postgres:\/\/.*EMBEDDED=off/);
    startsNothing();
  });

  it('exits naming REDIS_URL when Redis does not answer', async () => {
    const { code, output } = await startToExit({ ...reachable, DATA_DIR: dataDir, REDIS_URL: `redis://127.0.0.1:${closedPort}` });
    expect(code).to.equal(1);
    expect(output).to.match(/axid: Redis does not answer at redis:\/\/127\.0\.0\.1:\d+ \(REDIS_URL is set\) and EMBEDDED=off/);
    startsNothing();
  });

  it('exits naming S3_ENDPOINT when it is not set', async () => {
    const { code, output } = await startToExit({ ...reachable, DATA_DIR: dataDir });
    expect(code).to.equal(1);
    expect(output).to.match(/axid: S3_ENDPOINT is not set and EMBEDDED=off/);
    startsNothing();
  });

  it('exits naming the credentials when S3_ENDPOINT comes without them', async () => {
    const { code, output } = await startToExit({ ...reachable, DATA_DIR: dataDir, S3_ENDPOINT: 'http://127.0.0.1:9000' });
    expect(code).to.equal(1);
    expect(output).to.include('axid: invalid configuration').and.include('S3_ACCESS_KEY_ID: ').and.include('S3_SECRET_ACCESS_KEY: ');
    startsNothing();
  });
});
