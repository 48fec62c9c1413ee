// The Slack import as people run it (contract §13): `npm run import:slack`
// as a command against a running deployment's settings, and the level-3
// import run by a worker that is killed midway (SIGKILL) and replaced.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { generateSlackExport } from '../bench/slack-export-generator.js';
import { Client, serverLevels } from '../support/client.js';
import { expectOk } from '../support/expect.js';
import { uploadFile } from '../support/files.js';
import { SPEC_BYTES, filesFolder, sampleExport, writeZip } from '../support/slack-export.js';
import { openRaw } from '../support/sse.js';
import { processEnv, repoRoot, startProcess, type RunningProcess } from '../support/stack-process.js';
import { testEnv, type TestEnv } from '../support/stack.js';

function npmRun(env: Record<string, string>, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '-s', ...args], { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('Slack import processes', function () {
  this.timeout(180_000);
  const key = 'i'.repeat(40);
  let env: TestEnv;
  const running: RunningProcess[] = [];
  beforeEach(() => {
    env = testEnv();
  });
  afterEach(async () => {
    for (const p of running.splice(0)) await p.stop();
    await env.cleanup();
  });
  const start = async (extra: Record<string, string>) => {
    const p = await startProcess(processEnv(env, { BOOTSTRAP_ADMIN_KEY: key, ...extra }));
    running.push(p);
    return p;
  };

  it('npm run import:slack imports into the deployment, prints the report, adds nothing the second time, fails naming a broken file', async () => {
    const api = await start({});
    const zip = await writeZip(sampleExport());
    const files = filesFolder({ F001: SPEC_BYTES });
    const cmdEnv = processEnv(env);
    const dry = await npmRun(cmdEnv, ['import:slack', '--', zip, '--files-from', files, '--dry-run']);
    expect(dry.code, dry.stderr).to.equal(0);
    expect(dry.stdout).to.match(/^Dry run: nothing was written/);
    expect(dry.stdout).to.match(/messages +19\n/);
    const first = await npmRun(cmdEnv, ['import:slack', '--', zip, '--files-from', files]);
    expect(first.code, first.stderr).to.equal(0);
    expect(first.stdout).to.match(/^Imported:\n/);
    expect(first.stdout).to.match(/messages +19\n/);
    expect(first.stdout).to.match(/files +1\n/);
    expect(first.stdout).to.include('Skipped (1):\n  - general/2024-01-02.json 1704186500.000500 file F002 missing.png:');
    // Progress lines (no TTY here) on stderr.
    expect(first.stderr).to.match(/messages: \d+\/\d+ \(100%\)/);
    const owner = new Client(api.url, key);
    const channels = expectOk(await owner.get('/api/v1/channels?limit=100')).data.map((c: { name: string }) => c.name);
    expect(channels).to.include.members(['random', 'old-project']);

    const again = await npmRun(cmdEnv, ['import:slack', '--', zip, '--files-from', files]);
    expect(again.code).to.equal(0);
    expect(again.stdout).to.match(/messages +0\n/);
    expect(again.stdout).to.match(/Already imported by an earlier run .*19 messages/);

    const broken = await writeZip({ ...sampleExport(), 'random/2024-01-01.json': '{"oops"' });
    const failed = await npmRun(cmdEnv, ['import:slack', '--', broken]);
    expect(failed.code).to.equal(1);
    expect(failed.stderr).to.match(/import failed: random\/2024-01-01\.json: is not valid JSON/);

    const out = path.join(mkdtempSync(path.join(os.tmpdir(), 'axid-export-')), 'out.zip');
    const exported = await npmRun(cmdEnv, ['export:slack', '--', out, '--channels', 'random,general']);
    expect(exported.code, exported.stderr).to.equal(0);
    expect(exported.stdout).to.match(/channels +2\n/);
    expect(readFileSync(out).subarray(0, 2).toString()).to.equal('PK');
  });

  it('a worker killed midway (SIGKILL): another worker resumes the job, and the import ends with every message once', async () => {
    const level3 = { FEATURE_LEVEL: '3' };
    const api = await start({ ...level3, ROLES: 'api,gateway' });
    serverLevels.set(api.url, '3');
    let worker = await start({ ...level3, ROLES: 'worker', MIGRATE_ON_START: 'false' });
    const dir = mkdtempSync(path.join(os.tmpdir(), 'axid-gen-'));
    const zip = path.join(dir, 'big.zip');
    const made = await generateSlackExport(zip, { messages: 40_000, channels: 40, users: 200, files: 0, filesDir: path.join(dir, 'files') });
    const owner = new Client(api.url, key);
    const stream = await openRaw(api.url, key);
    const db = new pg.Client({ connectionString: env.config.databaseUrl });
    await db.connect();
    try {
      const res = await uploadFile(api.url, { key, data: readFileSync(zip), name: 'big.zip', path: '/api/v1/imports/slack' });
      expect(res.status, res.text).to.equal(202);
      const id = res.body.data.id;
      // Killed once some batches are in.
      for (;;) {
        const got = expectOk(await owner.get(`/api/v1/imports/${id}`)).data;
        if (got.counts.messages > 0) break;
        expect(got.status).to.be.oneOf(['queued', 'running']);
        await new Promise((r) => setTimeout(r, 50));
      }
      worker.child.kill('SIGKILL');
      await new Promise((r) => worker.child.once('exit', r));
      running.splice(running.indexOf(worker), 1);
      const midway = Number((await db.query('SELECT count(*) AS n FROM messages')).rows[0].n);
      expect(midway).to.be.greaterThan(0).and.lessThan(made.messages);
      worker = await start({ ...level3, ROLES: 'worker', MIGRATE_ON_START: 'false' });
      const finished = await stream.waitFor((f) => f.event === 'import.finished' && f.data.import_id === id, 120_000).catch(async (err: Error) => {
        throw new Error(`${err.message}\n${JSON.stringify(expectOk(await owner.get(`/api/v1/imports/${id}`)).data)}\n${worker.output().slice(-3000)}\n${api.output().slice(-2000)}`);
      });
      expect(finished.data.status).to.equal('finished');
      const got = expectOk(await owner.get(`/api/v1/imports/${id}`)).data;
      expect(got.counts.messages).to.equal(made.messages);
      expect(got.counts.replies).to.equal(made.replies);
      const total = Number((await db.query('SELECT count(*) AS n FROM messages')).rows[0].n);
      expect(total, 'every message once').to.equal(made.messages);
      const dupes = Number((await db.query("SELECT count(*) AS n FROM (SELECT scope, slack_key FROM slack_import_map WHERE kind = 'message' GROUP BY 1, 2 HAVING count(*) > 1) d")).rows[0].n);
      expect(dupes).to.equal(0);
    } finally {
      stream.close();
      serverLevels.delete(api.url);
      await db.end();
    }
  });
});
