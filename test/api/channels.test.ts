import { expect } from 'chai';
import { expectError, expectOk } from '../support/expect.js';
import { createChannel, waitForEvents } from '../support/conversations.js';
import { newWorkspace, stack, uniqueName } from '../support/stack.js';

const countChannels = async (workspaceId: string) =>
  Number((await stack().rt.db('channels').where({ workspace_id: workspaceId }).count<{ c: string }>('* as c').first())?.c);

describe('POST /channels', () => {
  it('creates a public channel with every field of the Channel object; the creator becomes a member', async () => {
    const ws = await newWorkspace();
    const res = await ws.owner.post('/api/v1/channels', { name: 'General Chat', description: 'hi' });
    const c = expectOk(res, 201).data;
    expect(c).to.include({ name: 'General Chat', description: 'hi', is_private: false, is_default: false, parent_channel_id: null, team_id: null, created_by: ws.ownerId });
    expect(c.id).to.be.a('string');
    expect(c.created_at).to.be.a('string');
    const members = expectOk(await ws.owner.get(`/api/v1/channels/${c.id}/members`)).data;
    expect(members.map((m: { user_id: string }) => m.user_id)).to.deep.equal([ws.ownerId]);
    await waitForEvents((e) => e.type === 'channel.created' && e.data.channel.id === c.id && e.to.scope === 'workspace');
  });

  it('keeps the name exactly as given (no slugging or case folding)', async () => {
    const ws = await newWorkspace();
    const c = await createChannel(ws.owner, { name: '  Ünïcode Name 🚀 ' });
    expect(c.name).to.equal('  Ünïcode Name 🚀 ');
  });

  it('answers 409 name_taken for a name already used in the workspace, and creates nothing', async () => {
    const ws = await newWorkspace();
    await createChannel(ws.owner, { name: 'dup' });
    const before = await countChannels(ws.workspaceId);
    expectError(await ws.owner.post('/api/v1/channels', { name: 'dup' }), 409, 'name_taken');
    expect(await countChannels(ws.workspaceId)).to.equal(before);
  });

  it('allows the same name in two workspaces and names differing only by case', async () => {
    const a = await newWorkspace();
    const b = await newWorkspace();
    await createChannel(a.owner, { name: 'same' });
    await createChannel(b.owner, { name: 'same' });
    await createChannel(a.owner, { name: 'SAME' });
  });

  it('rejects names that are empty, only white space or over 80 characters with 400 validation_error naming the field', async () => {
    const ws = await newWorkspace();
    for (const name of ['', '   ', 'x'.repeat(81), 42, undefined]) {
      const res = await ws.owner.post('/api/v1/channels', { name });
      expectError(res, 400, 'validation_error');
      expect(res.body.error.message).to.match(/name/);
    }
    expectOk(await ws.owner.post('/api/v1/channels', { name: 'é'.repeat(80) }), 201);
  });

  it('lets only admins and owners set is_default (403 forbidden for members)', async () => {
    const ws = await newWorkspace();
    const member = await ws.user();
    const admin = await ws.user({ role: 'admin' });
    const before = await countChannels(ws.workspaceId);
    expectError(await member.client.post('/api/v1/channels', { name: uniqueName('d'), is_default: true }), 403, 'forbidden');
    expect(await countChannels(ws.workspaceId)).to.equal(before);
    expect((await createChannel(admin.client, { is_default: true })).is_default).to.equal(true);
    expect((await createChannel(member.client, { is_default: false })).is_default).to.equal(false);
  });

  it('creates a sub-channel with parent_channel_id and team_id', async () => {
    const ws = await newWorkspace();
    const parent = await createChannel(ws.owner);
    const team = '7d1f0c1e-4b5a-4c1a-9a51-0e6f1d2b3c4d';
    const child = await createChannel(ws.owner, { parent_channel_id: parent.id, team_id: team });
    expect(child.parent_channel_id).to.equal(parent.id);
    expect(child.team_id).to.equal(team);
  });

  it('answers 400 validation_error when the parent is itself a sub-channel (depth 1)', async () => {
    const ws = await newWorkspace();
    const parent = await createChannel(ws.owner);
    const child = await createChannel(ws.owner, { parent_channel_id: parent.id });
    const before = await countChannels(ws.workspaceId);
    const res = await ws.owner.post('/api/v1/channels', { name: uniqueName('g'), parent_channel_id: child.id });
    expectError(res, 400, 'validation_error');
    expect(res.body.error.message).to.match(/parent_channel_id/);
    expect(await countChannels(ws.workspaceId)).to.equal(before);
  });

  it('answers 404 not_found for an unknown parent and for a private parent the caller cannot see, identically', async () => {
    const ws = await newWorkspace();
    const member = await ws.user();
    const hidden = await createChannel(ws.owner, { is_private: true });
    const a = await member.client.post('/api/v1/channels', { name: uniqueName('x'), parent_channel_id: hidden.id });
    const b = await member.client.post('/api/v1/channels', { name: uniqueName('x'), parent_channel_id: '00000000-0000-4000-8000-000000000000' });
    expectError(a, 404, 'not_found');
    expectError(b, 404, 'not_found');
    expect(a.body).to.deep.equal(b.body);
  });

  it('rejects malformed parent_channel_id and team_id and unknown fields with 400', async () => {
    const ws = await newWorkspace();
    expectError(await ws.owner.post('/api/v1/channels', { name: 'a', parent_channel_id: 'nope' }), 400, 'validation_error');
    expectError(await ws.owner.post('/api/v1/channels', { name: 'a', team_id: 12 }), 400, 'validation_error');
    expectError(await ws.owner.post('/api/v1/channels', { name: 'a', kind: 'dm' }), 400, 'validation_error');
  });

  it('announces a private channel to its members only (channel scope)', async () => {
    const ws = await newWorkspace();
    const c = await createChannel(ws.owner, { is_private: true });
    await waitForEvents((e) => e.type === 'channel.created' && e.data.channel.id === c.id && e.to.scope === 'channel' && e.to.channel_id === c.id);
  });
});

describe('GET /channels', () => {
  it('lists public channels and the private ones the caller is in, paginated', async () => {
    const ws = await newWorkspace();
    const member = await ws.user();
    const pub = await createChannel(ws.owner);
    const hidden = await createChannel(ws.owner, { is_private: true });
    const mine = await createChannel(member.client, { is_private: true });
    const ids = async (client = member.client) => {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const q: string = cursor ? `&cursor=${cursor}` : '';
        const body = expectOk(await client.get(`/api/v1/channels?limit=1${q}`));
        expect(body.data.length).to.be.at.most(1);
        seen.push(...body.data.map((c: { id: string }) => c.id));
        cursor = body.pagination.next_cursor;
        expect(body.pagination.has_more).to.equal(cursor !== null);
      } while (cursor);
      return seen;
    };
    expect(await ids()).to.deep.equal([pub.id, mine.id]);
    expect(await ids(ws.owner)).to.deep.equal([pub.id, hidden.id]);
  });

  it('never lists DM conversations', async () => {
    const ws = await newWorkspace();
    const other = await ws.user();
    expectOk(await ws.owner.post('/api/v1/dms', { user_ids: [other.id] }), 201);
    expect(expectOk(await ws.owner.get('/api/v1/channels')).data).to.deep.equal([]);
  });

  it('rejects a limit outside 1..200 and a forged cursor with 400', async () => {
    const ws = await newWorkspace();
    expectError(await ws.owner.get('/api/v1/channels?limit=0'), 400, 'validation_error');
    expectError(await ws.owner.get('/api/v1/channels?limit=201'), 400, 'validation_error');
    expectError(await ws.owner.get('/api/v1/channels?cursor=zzz'), 400, 'validation_error');
  });
});

describe('GET /channels/:id', () => {
  it('returns a public channel to any workspace member', async () => {
    const ws = await newWorkspace();
    const member = await ws.user();
    const c = await createChannel(ws.owner);
    expect(expectOk(await member.client.get(`/api/v1/channels/${c.id}`)).data.id).to.equal(c.id);
  });

  it('answers the same 404 for a missing, a malformed, a hidden and another workspace\'s channel', async () => {
    const ws = await newWorkspace();
    const other = await newWorkspace();
    const member = await ws.user();
    const hidden = await createChannel(ws.owner, { is_private: true });
    const foreign = await createChannel(other.owner);
    const bodies = [];
    for (const id of [hidden.id, foreign.id, '00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const res = await member.client.get(`/api/v1/channels/${id}`);
      expectError(res, 404, 'not_found');
      bodies.push(res.body);
    }
    for (const b of bodies) expect(b).to.deep.equal(bodies[0]);
  });

  it('answers 404 for a DM conversation id under /channels', async () => {
    const ws = await newWorkspace();
    const other = await ws.user();
    const dm = expectOk(await ws.owner.post('/api/v1/dms', { user_ids: [other.id] }), 201).data;
    expectError(await ws.owner.get(`/api/v1/channels/${dm.id}`), 404, 'not_found');
    expectError(await ws.owner.get(`/api/v1/channels/${dm.id}/messages`), 404, 'not_found');
    expectError(await ws.owner.post(`/api/v1/channels/${dm.id}/messages`, { content: 'x' }), 404, 'not_found');
    expectError(await ws.owner.get(`/api/v1/channels/${dm.id}/members`), 404, 'not_found');
    expectError(await ws.owner.post(`/api/v1/channels/${dm.id}/members`, { user_id: ws.ownerId }), 404, 'not_found');
    expectError(await ws.owner.post(`/api/v1/channels/${dm.id}/typing`), 404, 'not_found');
  });
});

describe('PATCH /channels/:id', () => {
  it('updates name and description for a member and emits channel.updated', async () => {
    const ws = await newWorkspace();
    const c = await createChannel(ws.owner);
    const res = expectOk(await ws.owner.patch(`/api/v1/channels/${c.id}`, { name: 'Renamed', description: 'new' })).data;
    expect(res).to.include({ id: c.id, name: 'Renamed', description: 'new' });
    expect(expectOk(await ws.owner.get(`/api/v1/channels/${c.id}`)).data.name).to.equal('Renamed');
    await waitForEvents((e) => e.type === 'channel.updated' && e.data.channel.id === c.id && e.data.channel.name === 'Renamed');
  });

  it('answers 409 name_taken when renaming to a taken name, changing nothing', async () => {
    const ws = await newWorkspace();
    const a = await createChannel(ws.owner);
    const b = await createChannel(ws.owner);
    expectError(await ws.owner.patch(`/api/v1/channels/${b.id}`, { name: a.name }), 409, 'name_taken');
    expect(expectOk(await ws.owner.get(`/api/v1/channels/${b.id}`)).data.name).to.equal(b.name);
  });

  it('answers 403 forbidden to a non-member of a public channel and to a member setting is_default', async () => {
    const ws = await newWorkspace();
    const member = await ws.user();
    const c = await createChannel(ws.owner);
    expectError(await member.client.patch(`/api/v1/channels/${c.id}`, { name: 'mine' }), 403, 'forbidden');
    const own = await createChannel(member.client);
    expectError(await member.client.patch(`/api/v1/channels/${own.id}`, { is_default: true }), 403, 'forbidden');
    expect(expectOk(await ws.owner.get(`/api/v1/channels/${c.id}`)).data.name).to.equal(c.name);
  });

  it('validates the body (400 naming the field)', async () => {
    const ws = await newWorkspace();
    const c = await createChannel(ws.owner);
    const res = await ws.owner.patch(`/api/v1/channels/${c.id}`, { name: '' });
    expectError(res, 400, 'validation_error');
    expect(res.body.error.message).to.match(/^name/);
  });
});
