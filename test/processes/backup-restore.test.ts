// Backup and restore (contract §16; docs/operations.md "Backup and restore"):
// `npm run backup` of a stack with data, `npm run restore` into an empty
// database and bucket, Axid started on them answering the same messages,
// counts and file bytes through HTTP; a restore into a database or a bucket
// that is not empty refuses and writes nothing.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startStack, type Stack } from '../../services/stack.js';
import { createDb } from '../../shared/db/knex.js';
import { createLogger } from '../../shared/logger.js';
import { Client } from '../support/client.js';
import { expectOk } from '../support/expect.js';
import { hashOfUrl, reachable, uploadFile, waitFor } from '../support/files.js';
import { separateStack } from '../support/separate-stack.js';
import { repoRoot } from '../support/stack-process.js';
import { newWorkspace, testEnv, uniqueName, type TestEnv } from '../support/stack.js';

/** Runs `npm run <script> -- <dir>` to its exit with this environment. */
function npmRun(script: 'backup' | 'restore' | 'retention', dir: string | null, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', script, ...(dir ? ['--', dir] : [])], { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c));
    child.stderr.on('data', (c: Buffer) => (output += c));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output }));
  });
}

describe('npm run retention, npm run backup and npm run restore', function () {
  this.timeout(180_000);
  let source: Awaited<ReturnType<typeof separateStack>>;
  let target: TestEnv;
  let restored: Stack | undefined;
  let spare: TestEnv;
  let dir: string;
  let s3: Record<string, string>;

  before(async () => {
    source = await separateStack();
    const endpoint = await source.stack.rt.s3.config.endpoint!();
    s3 = {
      S3_ENDPOINT: `${endpoint.protocol}//${endpoint.hostname}:${endpoint.port}`,
      S3_ACCESS_KEY_ID: source.env.config.s3.accessKeyId,
      S3_SECRET_ACCESS_KEY: source.env.config.s3.secretAccessKey,
    };
    // The restore's database and bucket: new, on the same servers.
    target = testEnv({ ...s3, S3_BUCKET: `axid-restore-${randomBytes(4).toString('hex')}` });
    spare = testEnv();
    dir = mkdtempSync(path.join(os.tmpdir(), 'axid-backup-'));
  });

  after(async () => {
    await restored?.close();
    await target?.cleanup();
    await spare?.cleanup();
    await source?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  // As in a deployment (EMBEDDED=off), and with no Redis answering: the commands need the database and the bucket only.
  const envOf = (e: TestEnv, bucket: string) => ({
    ...s3,
    DATABASE_URL: e.config.databaseUrl,
    S3_BUCKET: bucket,
    DATA_DIR: e.dataDir,
    LOG_LEVEL: 'info',
    EMBEDDED: 'off',
    REDIS_URL: 'redis://127.0.0.1:1',
  });

  it('restores into an empty database and bucket what Axid then serves as before, and refuses a target that is not empty', async () => {
    const s = source.stack;
    const ws = await newWorkspace(s);
    const channel = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('kept') }), 201).data;
    const root = expectOk(await ws.owner.post(`/api/v1/channels/${channel.id}/messages`, { content: 'before the backup', metadata: { type: 't', data: { n: 1 } } }), 201).data;
    expectOk(await ws.owner.post(`/api/v1/channels/${channel.id}/messages`, { content: 'a reply', thread_id: root.id }), 201);
    await ws.owner.post(`/api/v1/channels/${channel.id}/messages/${root.id}/reactions`, { emoji: 'tada' });
    const bytes = randomBytes(300_000);
    const upload = await uploadFile(s.url, { key: ws.ownerKey, data: bytes, name: 'report.bin' });
    expect(upload.status).to.equal(201);
    const fileId = upload.body.data.id as string;
    await waitFor(async () => (await s.rt.db('files').where({ id: fileId }).first())?.status === 'ready', 'the file to be processed');
    const history = (await ws.owner.get(`/api/v1/channels/${channel.id}/messages`)).text;
    const replies = (await ws.owner.get(`/api/v1/channels/${channel.id}/messages/${root.id}/replies`)).text;
    const members = expectOk(await ws.owner.get('/api/v1/workspaces/current/members?limit=200')).data;
    const sourceFile = expectOk(await ws.owner.get(`/api/v1/files/${fileId}`)).data;
    expect((await hashOfUrl(reachable(s, sourceFile.download_url))).sha256).to.equal(createHash('sha256').update(bytes).digest('hex'));

    const backup = await npmRun('backup', dir, envOf(source.env, source.env.config.s3.bucket));
    expect(backup.code, backup.output).to.equal(0);
    const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
    const counted = async (table: string) => Number((await s.rt.db(table).count('* as c').first())!.c);
    for (const table of ['workspaces', 'users', 'channels', 'messages', 'reactions', 'files', 'audit_log']) expect(manifest.counts[table], table).to.equal(await counted(table));
    expect(manifest.objects.map((o: { key: string }) => o.key)).to.include(`files/${ws.workspaceId}/${fileId}`);
    const object = manifest.objects.find((o: { key: string }) => o.key.endsWith(fileId));
    expect(object).to.deep.include({ bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });
    expect(manifest.database.sha256).to.match(/^[0-9a-f]{64}$/);

    const restore = await npmRun('restore', dir, envOf(target, target.config.s3.bucket));
    expect(restore.code, restore.output).to.equal(0);

    restored = await startStack(target.config, createLogger(target.config.logLevel));
    const owner = new Client(restored.url, ws.ownerKey);
    expect((await owner.get(`/api/v1/channels/${channel.id}/messages`)).text).to.equal(history);
    expect((await owner.get(`/api/v1/channels/${channel.id}/messages/${root.id}/replies`)).text).to.equal(replies);
    expect(expectOk(await owner.get('/api/v1/workspaces/current/members?limit=200')).data).to.deep.equal(members);
    const restoredFile = expectOk(await owner.get(`/api/v1/files/${fileId}`)).data;
    const served = await hashOfUrl(restoredFile.download_url);
    expect(served).to.include({ status: 200, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });

    // Into the database it just filled: refused.
    const again = await npmRun('restore', dir, envOf(target, `axid-empty-${randomBytes(4).toString('hex')}`));
    expect(again.code).to.equal(1);
    expect(again.output).to.match(/database is not empty/);
    // Into an empty database but the bucket it filled: refused, the database left empty.
    const intoFullBucket = await npmRun('restore', dir, envOf(spare, target.config.s3.bucket));
    expect(intoFullBucket.code).to.equal(1);
    expect(intoFullBucket.output).to.match(/bucket .* is not empty/);
    const spareDb = createDb(spare.config.databaseUrl, 1);
    try {
      expect(Number((await spareDb.raw("SELECT count(*) AS n FROM pg_tables WHERE schemaname = 'public'")).rows[0].n)).to.equal(0);
    } finally {
      await spareDb.destroy();
    }
  });

  it('npm run retention runs the retention job once, now, and says what it deleted', async () => {
    const s = source.stack;
    const ws = await newWorkspace(s);
    const channel = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('short') }), 201).data;
    const old = expectOk(await ws.owner.post(`/api/v1/channels/${channel.id}/messages`, { content: 'old' }), 201).data;
    const kept = expectOk(await ws.owner.post(`/api/v1/channels/${channel.id}/messages`, { content: 'kept' }), 201).data;
    expectOk(await ws.owner.patch(`/api/v1/channels/${channel.id}`, { retention_days: 1 }));
    await s.rt.db('messages').where({ id: old.id }).update({ created_at: new Date(Date.now() - 2 * 24 * 3600 * 1000) });
    const run = await npmRun('retention', null, envOf(source.env, source.env.config.s3.bucket));
    expect(run.code, run.output).to.equal(0);
    const done = run.output.split('\n').filter(Boolean).map((l) => JSON.parse(l)).find((l) => l.msg === 'retention done');
    expect(done).to.include({ channels: 1, messages: 1 });
    expect(await s.rt.db('messages').where({ channel_id: channel.id }).pluck('id')).to.deep.equal([kept.id]);
  });
});
