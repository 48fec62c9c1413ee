// Moving in from Slack (contract §13): the sample export (test/support/slack-export.ts)
// imported into a workspace, then read back through HTTP as its people read it.
import { expect } from 'chai';
import { truncateSync, copyFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { exportSlack } from '../../services/core/imports/slack-export.js';
import { generateApiKey } from '../../shared/auth.js';
import { emailIdentity } from '../../shared/identity.js';
import { importSlackExport, type ImportReport } from '../../services/core/imports/slack-import.js';
import { importDepsOf } from '../../services/core/imports/imports.deps.js';
import type { Stack } from '../../services/stack.js';
import { Client } from '../support/client.js';
import { expectOk } from '../support/expect.js';
import { reachable } from '../support/files.js';
import { SAMPLE, SAMPLE_COUNTS, SPEC_BYTES, filesFolder, sampleExport, writeZip, type ExportEntries } from '../support/slack-export.js';
import { level3Stack, newWorkspace, type TestWorkspace } from '../support/stack.js';

interface Msg {
  id: string;
  content: string;
  author_id: string | null;
  created_at: string;
  edited_at: string | null;
  mentioned_user_ids: string[];
  content_json: unknown;
  metadata: { type: string; data: Record<string, unknown> } | null;
  reactions: { emoji: string; count: number; user_ids?: string[] }[];
  thread?: { reply_count: number } | null;
  display: Record<string, string> | null;
}

const ZERO = { users: 0, channels: 0, dms: 0, messages: 0, replies: 0, reactions: 0, pins: 0, files: 0 };

describe('npm run import:slack (the import, at level 3)', () => {
  let s: Stack;
  let ws: TestWorkspace;
  let report: ImportReport;
  let zip: string;
  let files: string;
  let alice: Client;
  const run = (o: { dryRun?: boolean; workspaceId?: string; zipPath?: string } = {}) =>
    importSlackExport(importDepsOf(s.rt), o.zipPath ?? zip, { workspaceId: o.workspaceId ?? ws.workspaceId, filesFrom: files, dryRun: o.dryRun });
  const idOf = async (kind: string, key: string, scope = '') =>
    (await s.rt.db('slack_import_map').where({ workspace_id: ws.workspaceId, kind, scope, slack_key: key }).first('axid_id')).axid_id as string;
  /** A key for an imported person (people sign in once an owner gives them a way in; here, a key). */
  const keyFor = async (userId: string) => {
    const k = generateApiKey();
    await s.rt.db('api_keys').insert({ workspace_id: ws.workspaceId, user_id: userId, name: 'test', prefix: k.prefix, key_hash: k.hash });
    return new Client(s.url, k.key);
  };
  const all = async <T = Msg>(client: Client, path: string): Promise<T[]> => {
    const out: T[] = [];
    let cursor: string | null = null;
    do {
      const res = expectOk(await client.get(`${path}${path.includes('?') ? '&' : '?'}limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`));
      out.push(...res.data);
      cursor = res.next_cursor ?? null;
    } while (cursor);
    return out;
  };
  const history = async (channelSlackId: string, base = 'channels') => (await all(alice, `/api/v1/${base}/${await idOf('conversation', channelSlackId)}/messages`)).reverse();
  const counts = async (workspaceId: string) => {
    const [m] = await s.rt.db('messages').where({ workspace_id: workspaceId }).count('* as n');
    const [c] = await s.rt.db('channels').where({ workspace_id: workspaceId }).count('* as n');
    const [u] = await s.rt.db('users').where({ workspace_id: workspaceId }).count('* as n');
    const [r] = await s.rt.db('reactions as r').join('messages as m', 'm.id', 'r.message_id').where({ 'm.workspace_id': workspaceId }).count('* as n');
    return { messages: Number(m!.n), channels: Number(c!.n), users: Number(u!.n), reactions: Number(r!.n) };
  };

  const totals = async (workspaceId: string) => {
    const [m] = await s.rt.db('messages').where({ workspace_id: workspaceId }).count('* as n');
    const [r] = await s.rt.db('messages').where({ workspace_id: workspaceId }).whereNotNull('thread_id').count('* as n');
    const [x] = await s.rt.db('reactions as r').join('messages as m', 'm.id', 'r.message_id').where({ 'm.workspace_id': workspaceId }).count('* as n');
    return { messages: Number(m!.n), replies: Number(r!.n), reactions: Number(x!.n) };
  };
  /** Every message as conversation name (or its people), time and text; channel ids in links left out. */
  const texts = async (workspaceId: string) => {
    const rows: { content: string; created_at: Date; name: string | null; member_key: string | null }[] = await s.rt
      .db('messages as m')
      .join('channels as c', 'c.id', 'm.channel_id')
      .where({ 'm.workspace_id': workspaceId })
      .orderBy([{ column: 'm.created_at' }, { column: 'm.content' }])
      .select('m.content', 'm.created_at', 'c.name', 'c.kind');
    return rows.map((r) => `${r.name ?? 'dm'} ${r.created_at.toISOString()} ${r.content.replace(/\/c\/[0-9a-f-]{36}/g, '/c/ID')}`);
  };

  before(async () => {
    s = await level3Stack();
    ws = await newWorkspace(s);
    zip = await writeZip(sampleExport());
    files = filesFolder({ F001: SPEC_BYTES });
    report = await run();
    alice = await keyFor(await idOf('user', 'U001'));
  });

  it('reports what it added, the system messages, the notes and every skipped item with its reason', () => {
    expect(report.counts).to.deep.equal(SAMPLE_COUNTS);
    expect(report.system_messages).to.deep.equal({ channel_join: 1, channel_leave: 1 });
    const skipped = report.skipped.map((x) => `${x.item}: ${x.reason}`);
    expect(skipped).to.have.length(1);
    expect(skipped[0]).to.match(/^general\/2024-01-02\.json 1704186500\.000500 file F002 missing\.png: not in the --files-from folder, and the export has no download URL$/);
    const notes = report.notes.join('\n');
    expect(notes).to.include('Guests in Slack, members here in the channels the export lists (1): dave');
    expect(notes).to.include('Deactivated in Slack, removed members here whose messages keep their author (1): carol');
    expect(notes).to.match(/No email in the export: .* \(2\): bob, erin/);
    expect(notes).to.match(/mpdm-bob--erin--alice-1 went into the existing conversation of the same people/);
    expect(notes).to.match(/thread_broadcast/);
  });

  it('maps the people: emails where the export has them, a deleted user as a removed member, bots as agents without a key', async () => {
    const users = await all<{ id: string; name: string; is_agent: boolean; display_name: string | null }>(ws.owner, '/api/v1/users');
    const byName = new Map(users.map((u) => [u.name, u]));
    expect([...byName.keys()]).to.include.members(['alice', 'bob', 'dave', 'deploybot', 'erin', 'CI']);
    expect(byName.has('carol'), 'a deleted user is a removed member').to.equal(false);
    expect(byName.get('deploybot')!.is_agent).to.equal(true);
    expect(byName.get('CI')!.is_agent).to.equal(true);
    expect(byName.get('bob')!.is_agent).to.equal(false);
    const rows = await s.rt.db('users').where({ workspace_id: ws.workspaceId }).whereIn('name', ['alice', 'bob', 'carol', 'CI']).select('name', 'email', 'deactivated_at');
    const row = new Map((rows as { name: string; email: string | null; deactivated_at: Date | null }[]).map((r) => [r.name, r]));
    expect(row.get('alice')!.email).to.equal('alice@example.com');
    expect(row.get('bob')!.email).to.equal(null);
    expect(row.get('carol')!.deactivated_at).to.be.an.instanceOf(Date);
    const keys = await s.rt.db('api_keys').whereIn('user_id', [byName.get('CI')!.id, byName.get('deploybot')!.id]).count('* as n');
    expect(Number(keys[0]!.n), 'agents come without a key').to.equal(0);
  });

  it('maps the conversations: public (unicode, empty, archived), private, group DMs of the same people as one, DMs', async () => {
    const channels = await all<{ name: string; description: string; is_private: boolean; is_default: boolean; unread_count: number }>(alice, '/api/v1/channels?include_archived=true');
    const byName = new Map(channels.map((c) => [c.name, c]));
    expect([...byName.keys()]).to.include.members(['general', 'random', SAMPLE.unicodeName, 'empty-channel', 'old-project', 'secret-plans']);
    expect(byName.get('general')!.description).to.equal('Company-wide');
    expect(byName.get('general')!.is_default).to.equal(true);
    expect(byName.get('random')!.description).to.equal('Anything');
    expect(byName.get('secret-plans')!.is_private).to.equal(true);
    for (const c of channels) expect(c.unread_count, `${c.name}: imported history starts read`).to.equal(0);
    const archived = await s.rt.db('channels').where({ id: await idOf('conversation', 'C005') }).first('archived_at');
    expect(archived.archived_at).to.be.an.instanceOf(Date);
    expect(await history('C004')).to.deep.equal([]);
    expect((await history(SAMPLE.unicodeName === '' ? '' : 'C003')).map((m) => m.content)).to.deep.equal(['こんにちは']);

    const dms = await all<{ id: string; kind: string; unread_count: number }>(alice, '/api/v1/dms');
    expect(dms.map((d) => d.kind).sort()).to.deep.equal(['dm', 'group_dm']);
    expect(await idOf('conversation', 'G002')).to.equal(await idOf('conversation', 'G003'));
    expect((await history('G002', 'dms')).map((m) => m.content)).to.deep.equal(['group one', 'group two, same people']);
    expect((await history('D001', 'dms')).map((m) => m.content)).to.deep.equal(['hi bob', 'hi alice']);
  });

  it('keeps times, order, authors (a deleted one too), edits, bot authors, and turns mrkdwn into markdown with the webhooks\' converter', async () => {
    const general = await history('C001');
    expect(general.map((m) => m.content)).to.deep.equal([
      'Hello **team** @here &amp; friends',
      `Question about [#random](${s.rt.config.publicBaseUrl}/c/${await idOf('conversation', 'C002')})?`,
      'Build **42** passed',
      'Edited text',
      'Here is the spec',
      '*(file not imported: missing.png: not in the --files-from folder, and the export has no download URL)*',
      'I am a bot user',
    ]);
    expect(general[0]!.created_at).to.equal('2024-01-01T09:06:40.000Z');
    const edited = general[3]!;
    expect(edited.author_id).to.equal(await idOf('user', 'U003'));
    expect(edited.edited_at).to.equal('2024-01-02T09:05:00.000Z');
    expect(general[2]!.author_id).to.equal(await idOf('bot', 'B001'));
    expect(general[2]!.display).to.deep.equal({ username: 'CI', icon_emoji: ':white_check_mark:' });
    expect(general[6]!.author_id).to.equal(await idOf('user', 'U005'));
    const random = await history('C002');
    expect(random.map((m) => m.content)).to.deep.equal(['In random, see @alice and @channel', '*italic* and ~~strike~~ and `code`']);
    expect(random[0]!.mentioned_user_ids).to.deep.equal([await idOf('user', 'U001')]);
  });

  it('keeps threads whose replies run into later days, in order, with a broadcast as a reply, and mentions as real mentions', async () => {
    const general = await history('C001');
    const root = general[1]!;
    expect(root.thread?.reply_count).to.equal(3);
    const replies = (await all(alice, `/api/v1/channels/${await idOf('conversation', 'C001')}/messages?thread_id=${root.id}`)).reverse();
    expect(replies.map((m) => m.content)).to.deep.equal(['Answer one, cc @bob', 'Answer two, the next day', 'Broadcast reply']);
    const bob = await idOf('user', 'U002');
    expect(replies[0]!.mentioned_user_ids).to.deep.equal([bob]);
    expect(JSON.stringify(replies[0]!.content_json)).to.include(`{"type":"mention","attrs":{"id":"${bob}","label":"bob"}}`);
  });

  it('keeps reactions by several people (standard, custom and skin-toned names) and pins', async () => {
    const first = (await history('C001'))[0]!;
    const reactions = new Map(first.reactions.map((r) => [r.emoji, r.count]));
    expect(Object.fromEntries(reactions)).to.deep.equal({ thumbsup: 2, partyparrot: 1, '+1': 1 });
    const pinned = await s.rt.db('messages').where({ id: first.id }).first('pinned_at');
    expect(pinned.pinned_at).to.be.an.instanceOf(Date);
  });

  it('stores files present, served by their download URL byte for byte; names a missing one in its message', async () => {
    const general = await history('C001');
    const shared = general[4]!;
    expect(shared.metadata!.type).to.equal('axid.file');
    const file = expectOk(await alice.get(`/api/v1/files/${shared.metadata!.data.file_id as string}`)).data;
    expect(file.name).to.equal('spec.txt');
    const bytes = Buffer.from(await (await fetch(reachable(s, file.download_url))).arrayBuffer());
    expect(bytes.equals(SPEC_BYTES)).to.equal(true);
    expect(general[5]!.metadata).to.equal(null);
  });

  it('publishes no event per imported message, and search finds the history', async () => {
    const [published] = await s.rt.db('messages').where({ workspace_id: ws.workspaceId }).whereNotNull('event_xid').count('* as n');
    expect(Number(published!.n)).to.equal(0);
    const found = expectOk(await alice.get(`/api/v1/search/messages?q=${encodeURIComponent('"private stuff"')}`));
    expect(found.data.map((m: Msg) => m.content)).to.deep.equal(['private stuff']);
  });

  it('adds nothing when the same export is imported again; a later export adds only what is new', async () => {
    const before = await counts(ws.workspaceId);
    const again = await run();
    expect(again.counts).to.deep.equal(ZERO);
    expect(again.already_imported.messages).to.equal(SAMPLE_COUNTS.messages);
    expect(await counts(ws.workspaceId)).to.deep.equal(before);

    const later: ExportEntries = { ...sampleExport(), 'general/2024-01-03.json': [{ type: 'message', user: 'U006', text: 'new since the first export', ts: '1704272400.000100', thread_ts: SAMPLE.rootTs }] };
    const more = await run({ zipPath: await writeZip(later) });
    expect(more.counts).to.deep.equal({ ...ZERO, messages: 1, replies: 1 });
    const root = (await history('C001'))[1]!;
    expect(root.thread?.reply_count).to.equal(4);
  });

  it('--dry-run writes nothing and reports the same counts', async () => {
    const other = await newWorkspace(s);
    const before = await counts(other.workspaceId);
    const dry = await run({ dryRun: true, workspaceId: other.workspaceId });
    expect(dry.dry_run).to.equal(true);
    expect(dry.counts).to.deep.equal(SAMPLE_COUNTS);
    expect(await counts(other.workspaceId)).to.deep.equal(before);
  });

  it('export:slack writes the same format back: a fresh workspace importing it has the same counts and texts', async () => {
    const out = path.join(path.dirname(zip), 'round-trip.zip');
    const exported = await exportSlack(importDepsOf(s.rt), out, { workspaceId: ws.workspaceId });
    // The exporting workspace's owner is one more person.
    expect(exported).to.include({ users: SAMPLE_COUNTS.users + 1, channels: SAMPLE_COUNTS.channels, dms: SAMPLE_COUNTS.dms, files: 1, pins: 1 });
    const fresh = await newWorkspace(s);
    const back = await importSlackExport(importDepsOf(s.rt), out, { workspaceId: fresh.workspaceId });
    expect(back.skipped).to.deep.equal([]);
    const [{ messages: m1, replies: r1, reactions: x1 }] = [await totals(ws.workspaceId)];
    expect(back.counts).to.deep.equal({ users: SAMPLE_COUNTS.users + 1, channels: SAMPLE_COUNTS.channels, dms: SAMPLE_COUNTS.dms, messages: m1, replies: r1, reactions: x1, pins: 1, files: 1 });
    expect(await texts(fresh.workspaceId)).to.deep.equal(await texts(ws.workspaceId));
    // The file's bytes came along inside the ZIP.
    const file = await s.rt.db('files').where({ workspace_id: fresh.workspaceId }).first('size');
    expect(Number(file.size)).to.equal(SPEC_BYTES.length);
  });

  it('export:slack --channels writes only the named channels', async () => {
    const out = path.join(path.dirname(zip), 'random-only.zip');
    const exported = await exportSlack(importDepsOf(s.rt), out, { workspaceId: ws.workspaceId, channels: ['random'] });
    expect(exported).to.include({ channels: 1, dms: 0, messages: 2 });
    let error: Error | null = null;
    await exportSlack(importDepsOf(s.rt), out, { workspaceId: ws.workspaceId, channels: ['nope'] }).catch((err: Error) => (error = err));
    expect(error!.message).to.equal('--channels: no channel named "nope"');
    // Each written export is in the audit log (the refused one is not), with what it held.
    const audited = await s.rt.db('audit_log').where({ workspace_id: ws.workspaceId, action: 'export.created' }).orderBy('created_at').select('actor_id', 'details');
    expect(audited.at(-1)).to.deep.equal({ actor_id: null, details: { format: 'slack', channels: ['random'], counts: exported } });
    expect(audited.filter((a) => JSON.stringify(a.details.channels) === '["nope"]')).to.have.length(0);
  });

  it('--default-email-domain gives people without one an email; a person whose email an active user has is that user', async () => {
    const other = await newWorkspace(s);
    const existing = await other.user({ name: 'alice-here' });
    // Set as an admin sets it, so it is stored with its identity (shared/identity.ts).
    expectOk(await other.owner.patch(`/api/v1/workspaces/current/members/${existing.id}`, { email: 'Alice@Example.com' }));
    const r = await importSlackExport(importDepsOf(s.rt), zip, { workspaceId: other.workspaceId, filesFrom: files, defaultEmailDomain: 'example.org' });
    expect(r.counts.users).to.equal(SAMPLE_COUNTS.users - 1);
    expect(r.notes).to.include('user alice (U001) is the existing user alice-here (same email)');
    const emails = new Map((await s.rt.db('users').where({ workspace_id: other.workspaceId }).select('name', 'email')).map((u: { name: string; email: string | null }) => [u.name, u.email]));
    expect(emails.get('bob')).to.equal('bob@example.org');
    expect(emails.get('dave')).to.equal('dave@example.com');
    expect(emails.get('deploybot'), 'agents get none').to.equal(null);
    expect(emails.has('alice')).to.equal(false);
    // Imported addresses carry their identity as every other user's does, so sign-in and SSO find them.
    const keys = await s.rt.db('users').where({ workspace_id: other.workspaceId }).whereNotNull('email').select('email', 'email_key');
    for (const u of keys) expect(u.email_key, u.email).to.equal(emailIdentity(u.email));
    const mapped = await s.rt.db('slack_import_map').where({ workspace_id: other.workspaceId, kind: 'user', slack_key: 'U001' }).first('axid_id');
    expect(mapped.axid_id).to.equal(existing.id);
  });

  describe('files from url_private_download', () => {
    let server: http.Server;
    let base: string;
    const hits = new Map<string, number>();
    before(async () => {
      server = http.createServer((req, res) => {
        const n = (hits.get(req.url!) ?? 0) + 1;
        hits.set(req.url!, n);
        if (req.url === '/flaky' && n < 3) return void res.writeHead(503).end();
        if (req.url === '/flaky' || req.url === '/ok') return void res.writeHead(200, { 'content-type': 'text/plain' }).end(SPEC_BYTES);
        res.writeHead(404).end();
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(() => new Promise<void>((r) => server.close(() => r())));

    const exportWithFiles = (urls: Record<string, string>) => ({
      ...sampleExport(),
      'random/2024-01-05.json': Object.entries(urls).map(([id, url], i) => ({
        type: 'message', subtype: 'file_share', user: 'U001', text: `file ${id}`, ts: `1704450000.00010${i}`,
        files: [{ id, name: `${id}.txt`, mimetype: 'text/plain', url_private_download: url }],
      })),
    });

    it('fetches them, trying again after a 5xx; a 404 is a missing file, named in its message', async () => {
      const other = await newWorkspace(s);
      const deps = { ...importDepsOf(s.rt), allowPrivate: true };
      const r = await importSlackExport(deps, await writeZip(exportWithFiles({ F101: `${base}/ok`, F102: `${base}/flaky`, F103: `${base}/gone` })), { workspaceId: other.workspaceId });
      expect(r.counts.files).to.equal(2);
      expect(hits.get('/flaky')).to.equal(3);
      expect(r.skipped.map((x) => `${x.item}: ${x.reason}`)).to.include('random/2024-01-05.json 1704450000.000102 file F103 F103.txt: download answered 404');
      const sizes = await s.rt.db('files').where({ workspace_id: other.workspaceId }).pluck('size');
      expect(sizes.map(Number)).to.deep.equal([SPEC_BYTES.length, SPEC_BYTES.length]);
      const note = await s.rt.db('messages').where({ workspace_id: other.workspaceId }).where('content', 'like', 'file F103%').first('content');
      expect(note.content).to.equal('file F103\n\n*(file not imported: F103.txt: download answered 404)*');
    });

    it('never fetches from private, loopback or link-local addresses (unless EVENT_SUBSCRIPTION_ALLOW_PRIVATE), nor other schemes', async () => {
      const other = await newWorkspace(s);
      const before = hits.get('/ok') ?? 0;
      const urls = { F201: `${base}/ok`, F202: 'http://169.254.169.254/latest/meta-data/', F203: 'https://10.0.0.1/x', F204: 'file:///etc/passwd', F205: 'https://[::1]/x' };
      const r = await importSlackExport(importDepsOf(s.rt), await writeZip(exportWithFiles(urls)), { workspaceId: other.workspaceId });
      expect(r.counts.files).to.equal(0);
      expect(hits.get('/ok') ?? 0, 'nothing reached the local server').to.equal(before);
      const reasons = new Map(r.skipped.filter((x) => x.item.includes(' file F2')).map((x) => [x.item.split(' file ')[1]!.split(' ')[0]!, x.reason]));
      expect(reasons.get('F201')).to.equal('its download URL must be an https:// URL');
      expect(reasons.get('F202')).to.equal('its download URL must be an https:// URL');
      expect(reasons.get('F203')).to.match(/^download refused: the host 10\.0\.0\.1 is a private address/);
      expect(reasons.get('F204')).to.equal('its download URL must be an https:// URL');
      expect(reasons.get('F205')).to.match(/^download refused: .*loopback/);
    });
  });

  describe('a malformed export fails naming the file, and writes nothing', () => {
    const fails = async (entries: ExportEntries | string, message: RegExp) => {
      const other = await newWorkspace(s);
      const before = await counts(other.workspaceId);
      const zipPath = typeof entries === 'string' ? entries : await writeZip(entries);
      let error: Error | null = null;
      await run({ zipPath, workspaceId: other.workspaceId }).catch((err: Error) => (error = err));
      expect(error, 'the import fails').to.not.equal(null);
      expect(error!.message).to.match(message);
      expect(await counts(other.workspaceId)).to.deep.equal(before);
    };

    it('a truncated ZIP', async () => {
      const cut = `${zip}.cut.zip`;
      copyFileSync(zip, cut);
      truncateSync(cut, 2000);
      await fails(cut, /export\.zip\.cut\.zip: is not a readable ZIP archive/);
    });

    it('a message file that is not JSON', async () => {
      await fails({ ...sampleExport(), 'random/2024-01-01.json': '[{"type": "message", "text": "cut here' }, /^random\/2024-01-01\.json: is not valid JSON/);
    });

    it('a message by a user id nobody defines', async () => {
      await fails(
        { ...sampleExport(), 'random/2024-01-02.json': [{ type: 'message', user: 'U999', text: 'who?', ts: '1704196400.000100' }] },
        /^random\/2024-01-02\.json: the message of ts 1704196400\.000100 is by user U999, whom users\.json does not define/,
      );
    });

    it('no users.json, or a metadata file of the wrong shape', async () => {
      const { ['users.json']: _users, ...rest } = sampleExport();
      await fails(rest, /^users\.json: is not in the export/);
      await fails({ ...sampleExport(), 'channels.json': { channels: [] } }, /^channels\.json: must be a JSON array/);
      await fails({ ...sampleExport(), 'users.json': [{ name: 'no-id' }] }, /^users\.json: item 0\.id:/);
    });
  });
});
