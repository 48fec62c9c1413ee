import { expect } from 'chai';
import { expectError, expectOk } from '../support/expect.js';
import { newWorkspace, uniqueName } from '../support/stack.js';

describe('/workspaces/current', () => {
  it('returns id, name, settings and created_at', async () => {
    const ws = await newWorkspace();
    const body = expectOk(await ws.owner.get('/api/v1/workspaces/current'));
    expect(body.data).to.have.all.keys('id', 'name', 'settings', 'created_at');
    expect(body.data.id).to.equal(ws.workspaceId);
    expect(body.data.settings).to.deep.equal({ max_users: null });
  });

  it('lets owners and admins update the name and settings', async () => {
    const ws = await newWorkspace();
    const admin = await ws.user({ role: 'admin' });
    const name = uniqueName('Renamed');
    expect(expectOk(await admin.client.patch('/api/v1/workspaces/current', { name })).data.name).to.equal(name);
    expect(expectOk(await ws.owner.patch('/api/v1/workspaces/current', { settings: { max_users: 10 } })).data.settings.max_users).to.equal(10);
    // settings merge: a name change keeps them
    expect(expectOk(await ws.owner.patch('/api/v1/workspaces/current', { name })).data.settings.max_users).to.equal(10);
  });

  it('refuses members with 403 forbidden and changes nothing', async () => {
    const ws = await newWorkspace();
    const member = await ws.user();
    const before = expectOk(await ws.owner.get('/api/v1/workspaces/current')).data;
    expectError(await member.client.patch('/api/v1/workspaces/current', { name: 'x' }), 403, 'forbidden');
    expect(expectOk(await ws.owner.get('/api/v1/workspaces/current')).data).to.deep.equal(before);
  });

  it('takes an empty patch as a no-op 200 (never a 500), and still refuses it to members', async () => {
    const ws = await newWorkspace();
    await ws.owner.patch('/api/v1/workspaces/current', { settings: { max_users: 5 } });
    const before = expectOk(await ws.owner.get('/api/v1/workspaces/current')).data;
    for (const patch of [{}, { settings: {} }]) {
      expect(expectOk(await ws.owner.patch('/api/v1/workspaces/current', patch)).data, JSON.stringify(patch)).to.deep.equal(before);
    }
    expectError(await (await ws.user()).client.patch('/api/v1/workspaces/current', {}), 403, 'forbidden');
    expect(expectOk(await ws.owner.get('/api/v1/workspaces/current')).data).to.deep.equal(before);
  });

  it('answers 400 validation_error for bad settings', async () => {
    const ws = await newWorkspace();
    expectError(await ws.owner.patch('/api/v1/workspaces/current', { settings: { max_users: 0 } }), 400, 'validation_error');
    expectError(await ws.owner.patch('/api/v1/workspaces/current', { settings: { colour: 'red' } }), 400, 'validation_error');
    expectError(await ws.owner.patch('/api/v1/workspaces/current', { name: '' }), 400, 'validation_error');
  });

  it('lists members', async () => {
    const ws = await newWorkspace();
    const member = await ws.user();
    const body = expectOk(await member.client.get('/api/v1/workspaces/current/members'));
    expect(body.data.map((u: { id: string }) => u.id)).to.have.members([ws.ownerId, member.id]);
    expect(body.pagination).to.deep.equal({ next_cursor: null, has_more: false });
  });
});

describe('PATCH /workspaces/current/members/{user_id}', () => {
  it('lets an admin make a member admin', async () => {
    const ws = await newWorkspace();
    const admin = await ws.user({ role: 'admin' });
    const member = await ws.user();
    const body = expectOk(await admin.client.patch(`/api/v1/workspaces/current/members/${member.id}`, { role: 'admin' }));
    expect(body.data.role).to.equal('admin');
  });

  it('lets only an owner grant or remove owner', async () => {
    const ws = await newWorkspace();
    const admin = await ws.user({ role: 'admin' });
    const member = await ws.user();
    expectError(await admin.client.patch(`/api/v1/workspaces/current/members/${member.id}`, { role: 'owner' }), 403, 'forbidden');
    expectError(await admin.client.patch(`/api/v1/workspaces/current/members/${ws.ownerId}`, { role: 'member' }), 403, 'forbidden');
    expect(expectOk(await ws.owner.patch(`/api/v1/workspaces/current/members/${member.id}`, { role: 'owner' })).data.role).to.equal('owner');
    // now two owners: the first may step down
    expect(expectOk(await ws.owner.patch(`/api/v1/workspaces/current/members/${ws.ownerId}`, { role: 'admin' })).data.role).to.equal('admin');
  });

  it('keeps the last owner', async () => {
    const ws = await newWorkspace();
    expectError(await ws.owner.patch(`/api/v1/workspaces/current/members/${ws.ownerId}`, { role: 'admin' }), 409, 'conflict');
    expect(expectOk(await ws.owner.get('/api/v1/users/me')).data.role).to.equal('owner');
  });

  it('refuses members with 403 forbidden', async () => {
    const ws = await newWorkspace();
    const member = await ws.user();
    const other = await ws.user();
    expectError(await member.client.patch(`/api/v1/workspaces/current/members/${other.id}`, { role: 'admin' }), 403, 'forbidden');
  });

  it('answers 404 not_found for someone outside the workspace and 400 for a bad role', async () => {
    const ws = await newWorkspace();
    const other = await newWorkspace();
    expectError(await ws.owner.patch(`/api/v1/workspaces/current/members/${other.ownerId}`, { role: 'admin' }), 404, 'not_found');
    const member = await ws.user();
    expectError(await ws.owner.patch(`/api/v1/workspaces/current/members/${member.id}`, { role: 'boss' }), 400, 'validation_error');
  });
});

describe('DELETE /workspaces/current/members/{user_id}', () => {
  it('removes a member: 204, their keys stop working and they leave the list', async () => {
    const ws = await newWorkspace();
    const member = await ws.user();
    const res = await ws.owner.delete(`/api/v1/workspaces/current/members/${member.id}`);
    expect(res.status).to.equal(204);
    expectError(await member.client.get('/api/v1/users/me'), 401, 'unauthorized');
    expectError(await ws.owner.get(`/api/v1/users/${member.id}`), 404, 'not_found');
    const members = expectOk(await ws.owner.get('/api/v1/workspaces/current/members')).data;
    expect(members.map((u: { id: string }) => u.id)).not.to.include(member.id);
  });

  it('refuses an admin removing an owner, and a member removing anyone', async () => {
    const ws = await newWorkspace();
    const admin = await ws.user({ role: 'admin' });
    const member = await ws.user();
    expectError(await admin.client.delete(`/api/v1/workspaces/current/members/${ws.ownerId}`), 403, 'forbidden');
    expectError(await member.client.delete(`/api/v1/workspaces/current/members/${admin.id}`), 403, 'forbidden');
    expectOk(await admin.client.get('/api/v1/users/me'));
  });

  it('keeps the last owner', async () => {
    const ws = await newWorkspace();
    expectError(await ws.owner.delete(`/api/v1/workspaces/current/members/${ws.ownerId}`), 409, 'conflict');
  });
});
