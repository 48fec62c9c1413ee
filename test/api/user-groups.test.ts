// User groups (contract §14, level 3; docs/team-chat.md): CRUD by owners and
// admins, reading by every member, handle rules (409 name_taken against a
// user's name and another group), member validation, the workspace events,
// and that none of it exists at level 2.
import { expect } from 'chai';
import { expectError, expectOk } from '../support/expect.js';
import { openRaw } from '../support/sse.js';
import { level3Stack, newWorkspace, stack, uniqueName } from '../support/stack.js';

const handle = () => uniqueName('grp').slice(0, 40);

describe('user groups (level 3)', () => {
  it('creates, reads, lists, renames, replaces members and deletes, each announced to the workspace', async () => {
    const s = await level3Stack();
    const ws = await newWorkspace(s);
    const alice = await ws.user();
    const bot = await ws.user({ is_agent: true });
    const watcher = await openRaw(s.url, alice.key);
    try {
      const h = handle();
      const created = expectOk(await ws.owner.post('/api/v1/user-groups', { handle: h, name: 'Backend', description: 'on call', member_ids: [alice.id, bot.id] }), 201).data;
      expect(created).to.include({ handle: h, name: 'Backend', description: 'on call', created_by: ws.ownerId });
      expect(created.member_ids).to.have.members([alice.id, bot.id]);
      expect((await watcher.waitFor((f) => f.event === 'user_group.created')).data.user_group).to.deep.include({ id: created.id, handle: h });

      // Every member reads them.
      expect(expectOk(await alice.client.get(`/api/v1/user-groups/${created.id}`)).data).to.deep.equal(created);
      expect(expectOk(await alice.client.get('/api/v1/user-groups')).data.map((g: { id: string }) => g.id)).to.deep.equal([created.id]);

      const h2 = handle();
      const renamed = expectOk(await ws.owner.patch(`/api/v1/user-groups/${created.id}`, { handle: h2, name: 'Back end' })).data;
      expect(renamed).to.include({ handle: h2, name: 'Back end', description: 'on call' });
      expect((await watcher.waitFor((f) => f.event === 'user_group.updated')).data.user_group).to.include({ handle: h2 });

      const replaced = expectOk(await ws.owner.put(`/api/v1/user-groups/${created.id}/members`, { user_ids: [bot.id] })).data;
      expect(replaced.member_ids).to.deep.equal([bot.id]);
      await watcher.waitForCount((f) => f.event === 'user_group.updated', 2);
      const emptied = expectOk(await ws.owner.put(`/api/v1/user-groups/${created.id}/members`, { user_ids: [] })).data;
      expect(emptied.member_ids).to.deep.equal([]);

      expect((await ws.owner.delete(`/api/v1/user-groups/${created.id}`)).status).to.equal(204);
      expect((await watcher.waitFor((f) => f.event === 'user_group.deleted')).data).to.deep.include({ user_group_id: created.id });
      expectError(await ws.owner.get(`/api/v1/user-groups/${created.id}`), 404, 'not_found');
      expectError(await ws.owner.delete(`/api/v1/user-groups/${created.id}`), 404, 'not_found');
    } finally {
      watcher.close();
    }
  });

  it('keeps handles unique among users\' names and groups (409 name_taken), renaming a group to its own handle included', async () => {
    const s = await level3Stack();
    const ws = await newWorkspace(s);
    const userName = uniqueName('dana');
    await ws.user({ name: userName });
    expectError(await ws.owner.post('/api/v1/user-groups', { handle: userName, name: 'x', member_ids: [] }), 409, 'name_taken');
    const h = handle();
    const first = expectOk(await ws.owner.post('/api/v1/user-groups', { handle: h, name: 'one', member_ids: [] }), 201).data;
    expectError(await ws.owner.post('/api/v1/user-groups', { handle: h, name: 'two', member_ids: [] }), 409, 'name_taken');
    const second = expectOk(await ws.owner.post('/api/v1/user-groups', { handle: handle(), name: 'two', member_ids: [] }), 201).data;
    expectError(await ws.owner.patch(`/api/v1/user-groups/${second.id}`, { handle: h }), 409, 'name_taken');
    expectError(await ws.owner.patch(`/api/v1/user-groups/${second.id}`, { handle: userName }), 409, 'name_taken');
    // Its own handle is not taken by itself.
    expect(expectOk(await ws.owner.patch(`/api/v1/user-groups/${first.id}`, { handle: h, name: 'uno' })).data).to.include({ handle: h, name: 'uno' });
    // And the other way: no user may take a group's handle, created or renamed.
    expectError(await ws.owner.post('/api/v1/users', { name: h }), 409, 'name_taken');
    expectError(await ws.owner.post('/api/v1/users', { name: h, is_agent: true }), 409, 'name_taken');
    const erin = await ws.user();
    expectError(await erin.client.patch('/api/v1/users/me', { name: h }), 409, 'name_taken');
    expectOk(await erin.client.patch('/api/v1/users/me', { display_name: 'Erin' }));
    // Another workspace may use the same handle.
    const other = await newWorkspace(s);
    expectOk(await other.owner.post('/api/v1/user-groups', { handle: h, name: 'one', member_ids: [] }), 201);
    // Concurrent creations of one handle: exactly one wins.
    const h3 = handle();
    const raced = await Promise.all([1, 2, 3].map(() => ws.owner.post('/api/v1/user-groups', { handle: h3, name: 'r', member_ids: [] })));
    expect(raced.map((r) => r.status).sort()).to.deep.equal([201, 409, 409]);
  });

  it('validates handle, name, description and members with 400, writing nothing', async () => {
    const s = await level3Stack();
    const ws = await newWorkspace(s);
    const stranger = await newWorkspace(s);
    const gone = await ws.user();
    expect((await ws.owner.delete(`/api/v1/workspaces/current/members/${gone.id}`)).status).to.be.oneOf([200, 204]);
    const bad: Record<string, unknown>[] = [
      { handle: '', name: 'x', member_ids: [] },
      { handle: 'a'.repeat(41), name: 'x', member_ids: [] },
      { handle: 'Upper', name: 'x', member_ids: [] },
      { handle: 'with space', name: 'x', member_ids: [] },
      { handle: 'émoji', name: 'x', member_ids: [] },
      { handle: 'here', name: 'x', member_ids: [] },
      { handle: 'channel', name: 'x', member_ids: [] },
      { handle: handle(), name: '', member_ids: [] },
      { handle: handle(), name: '   ', member_ids: [] },
      { handle: handle(), name: 'x', description: 'd'.repeat(251), member_ids: [] },
      { handle: handle(), name: 'x' },
      { handle: handle(), name: 'x', member_ids: ['not-a-uuid'] },
      { handle: handle(), name: 'x', member_ids: [ws.ownerId, ws.ownerId] },
      { handle: handle(), name: 'x', member_ids: [stranger.ownerId] },
      { handle: handle(), name: 'x', member_ids: [gone.id] },
      { handle: handle(), name: 'x', member_ids: [], extra: true },
    ];
    for (const body of bad) expectError(await ws.owner.post('/api/v1/user-groups', body), 400, 'validation_error');
    expect(expectOk(await ws.owner.get('/api/v1/user-groups')).data).to.deep.equal([]);
    const g = expectOk(await ws.owner.post('/api/v1/user-groups', { handle: handle(), name: 'x', member_ids: [ws.ownerId] }), 201).data;
    expectError(await ws.owner.put(`/api/v1/user-groups/${g.id}/members`, { user_ids: [stranger.ownerId] }), 400, 'validation_error');
    expectError(await ws.owner.patch(`/api/v1/user-groups/${g.id}`, { handle: 'Bad Handle' }), 400, 'validation_error');
    expect(expectOk(await ws.owner.get(`/api/v1/user-groups/${g.id}`)).data.member_ids).to.deep.equal([ws.ownerId]);
    // Another workspace's group is not there.
    expectError(await stranger.owner.get(`/api/v1/user-groups/${g.id}`), 404, 'not_found');
    expectError(await stranger.owner.delete(`/api/v1/user-groups/${g.id}`), 404, 'not_found');
    expectError(await ws.owner.get('/api/v1/user-groups/not-a-uuid'), 404, 'not_found');
  });

  it('lets owners and admins manage groups; members and agents get 403', async () => {
    const s = await level3Stack();
    const ws = await newWorkspace(s);
    const admin = await ws.user({ role: 'admin' });
    const member = await ws.user();
    const bot = await ws.user({ is_agent: true });
    const g = expectOk(await admin.client.post('/api/v1/user-groups', { handle: handle(), name: 'x', member_ids: [member.id] }), 201).data;
    for (const client of [member.client, bot.client]) {
      expectError(await client.post('/api/v1/user-groups', { handle: handle(), name: 'y', member_ids: [] }), 403, 'forbidden');
      expectError(await client.patch(`/api/v1/user-groups/${g.id}`, { name: 'z' }), 403, 'forbidden');
      expectError(await client.put(`/api/v1/user-groups/${g.id}/members`, { user_ids: [] }), 403, 'forbidden');
      expectError(await client.delete(`/api/v1/user-groups/${g.id}`), 403, 'forbidden');
    }
    expect(expectOk(await member.client.get(`/api/v1/user-groups/${g.id}`)).data).to.include({ name: 'x' });
  });

  it('does not exist at level 2', async () => {
    const ws = await newWorkspace(stack());
    expect((await ws.owner.post('/api/v1/user-groups', { handle: handle(), name: 'x', member_ids: [] })).status).to.equal(404);
    expect((await ws.owner.get('/api/v1/user-groups')).status).to.equal(404);
  });
});
