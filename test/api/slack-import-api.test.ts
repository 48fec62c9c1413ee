// POST /imports/slack and GET /imports/{id} (contract §13, level 3): an
// owner uploads a Slack export, the worker imports it, the owner follows it
// and hears `import.finished` on the stream.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import type { Stack } from '../../services/stack.js';
import { expectError, expectOk } from '../support/expect.js';
import { uploadFile } from '../support/files.js';
import { SAMPLE_COUNTS, sampleExport, writeZip } from '../support/slack-export.js';
import { openRaw } from '../support/sse.js';
import { level3Stack, newWorkspace, stack, type TestWorkspace } from '../support/stack.js';

describe('POST /api/v1/imports/slack (level 3)', () => {
  let s: Stack;
  let ws: TestWorkspace;
  let zip: Buffer;
  before(async () => {
    s = await level3Stack();
    zip = readFileSync(await writeZip(sampleExport()));
  });
  beforeEach(async () => {
    ws = await newWorkspace(s);
  });
  const upload = async (key: string, data: Buffer) => ({
    ...(await uploadFile(s.url, { key, data, name: 'slack-export.zip', type: 'application/zip', path: '/api/v1/imports/slack' })),
    expectedLevel: '3',
  });

  it('answers 202 with the import; the worker runs it; import.finished reaches the owner; GET follows it to its report', async () => {
    const stream = await openRaw(s.url, ws.ownerKey);
    try {
      const res = await upload(ws.ownerKey, zip);
      expect(res.status).to.equal(202);
      const started = res.body.data;
      expect(started).to.include({ status: 'queued', source: 'slack', report: null, error: null });
      expect(started.counts).to.deep.equal({ users: 0, channels: 0, dms: 0, messages: 0, replies: 0, reactions: 0, pins: 0, files: 0 });
      const finished = await stream.waitFor((f) => f.event === 'import.finished' && f.data.import_id === started.id, 30_000);
      expect(finished.data.status).to.equal('finished');
      expect(finished.data.counts).to.deep.equal({ ...SAMPLE_COUNTS, files: 0 });
      const got = expectOk(await ws.owner.get(`/api/v1/imports/${started.id}`)).data;
      expect(got.status).to.equal('finished');
      expect(got.counts).to.deep.equal({ ...SAMPLE_COUNTS, files: 0 });
      expect(got.report.skipped.map((x: { item: string }) => x.item)).to.include.members(['general/2024-01-02.json 1704186400.000400 file F001 spec.txt']);
      expect(got.finished_at).to.be.a('string');
      // The audit log has who started it and that it finished (contract §16).
      const audited = expectOk(await ws.owner.get(`/api/v1/audit-log?limit=100`)).data.filter((e: { target_id: string }) => e.target_id === started.id);
      expect(audited.map((e: { action: string; actor_id: string | null }) => [e.action, e.actor_id])).to.deep.equal([
        ['import.finished', null],
        ['import.started', ws.ownerId],
      ]);
      const channels = expectOk(await ws.owner.get('/api/v1/channels?limit=100&include_archived=true')).data.map((c: { name: string }) => c.name);
      expect(channels).to.include.members(['general', 'random', 'old-project']);
      // The upload holds the team's history: gone once imported.
      const left = await s.rt.db('imports').where({ id: started.id }).first('storage_key');
      const head = await s.rt.s3.send(new (await import('@aws-sdk/client-s3')).HeadObjectCommand({ Bucket: s.rt.config.s3.bucket, Key: left.storage_key })).then(() => 'there', () => 'gone');
      expect(head).to.equal('gone');
    } finally {
      stream.close();
    }
  });

  it('a broken export ends failed, naming the file, and writes nothing', async () => {
    const stream = await openRaw(s.url, ws.ownerKey);
    try {
      const broken = readFileSync(await writeZip({ ...sampleExport(), 'random/2024-01-01.json': 'not json' }));
      const started = (await upload(ws.ownerKey, broken)).body.data;
      const finished = await stream.waitFor((f) => f.event === 'import.finished' && f.data.import_id === started.id, 30_000);
      expect(finished.data.status).to.equal('failed');
      const got = expectOk(await ws.owner.get(`/api/v1/imports/${started.id}`)).data;
      expect(got.status).to.equal('failed');
      expect(got.error).to.match(/^random\/2024-01-01\.json: is not valid JSON/);
      const [n] = await s.rt.db('messages').where({ workspace_id: ws.workspaceId }).count('* as n');
      expect(Number(n!.n)).to.equal(0);
    } finally {
      stream.close();
    }
  });

  it('only owners import or read imports: admins, members and agents get 403; another workspace\'s import is 404', async () => {
    for (const role of ['admin', 'member'] as const) {
      const u = await ws.user({ role });
      expectError(await upload(u.key, zip), 403, 'forbidden');
    }
    const agent = await ws.user({ is_agent: true });
    expectError(await upload(agent.key, zip), 403, 'forbidden');
    const started = (await upload(ws.ownerKey, zip)).body.data;
    const admin = await ws.user({ role: 'admin' });
    expectError(await admin.client.get(`/api/v1/imports/${started.id}`), 403, 'forbidden');
    const other = await newWorkspace(s);
    expectError(await other.owner.get(`/api/v1/imports/${started.id}`), 404, 'not_found');
    expectError(await ws.owner.get('/api/v1/imports/not-an-id'), 404, 'not_found');
  });

  it('refuses a body that is not multipart (415)', async () => {
    expectError(await ws.owner.post('/api/v1/imports/slack', { file: 'x' }), 415, 'unsupported_media_type');
  });

  it('does not exist at level 2 (404)', async () => {
    const ws2 = await newWorkspace(stack());
    const res = await uploadFile(stack().url, { key: ws2.ownerKey, data: zip, name: 'x.zip', path: '/api/v1/imports/slack' });
    expect(res.status).to.equal(404);
  });
});
