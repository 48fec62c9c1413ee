// Reversible removal (level 3, contract §14): removing a member keeps the user
// and their messages; POST /workspaces/current/members/{id}/reactivate (owners
// and admins) brings them back with their role and without their old keys.
// Owners and admins list, make and revoke an agent's keys under /users/{id}/api-keys.
import { expect } from 'chai';
import { expectError, expectOk } from '../support/expect.js';
import { Client } from '../support/client.js';
import { PASSWORD, clearSignInFailures, personByInvite } from '../support/sign-in.js';
import { level3Stack, newWorkspace, uniqueName, type TestWorkspace } from '../support/stack.js';
import type { Stack } from '../../services/stack.js';

describe('reversible removal (level 3)', () => {
  let s: Stack;
  let ws: TestWorkspace;
  beforeEach(async () => {
    s = await level3Stack();
    ws = await newWorkspace(s);
    await clearSignInFailures(s);
  });
  const members = '/api/v1/workspaces/current/members';
  const auditOf = async (action: string, targetId: string) =>
    expectOk(await ws.owner.get(`/api/v1/audit-log?action=${action}&limit=200`)).data.filter((e: { target_id: string }) => e.target_id === targetId);

  it('keeps a removed person and their messages, and brings them back with their role, their DMs and no old key; they sign in again', async () => {
    const person = await personByInvite(s, ws, { role: 'admin' });
    const channel = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('c') }), 201).data;
    expectOk(await person.client.post(`/api/v1/channels/${channel.id}/members`, { user_id: person.id }), 201);
    const said = expectOk(await person.client.post(`/api/v1/channels/${channel.id}/messages`, { content: 'still here' }), 201).data;
    const dm = expectOk(await ws.owner.post('/api/v1/dms', { user_ids: [person.id] }), 201).data;
    expectOk(await person.client.post(`/api/v1/dms/${dm.id}/messages`, { content: 'hello from the DM' }), 201);

    expectOk(await ws.owner.delete(`${members}/${person.id}`), 204);
    expectError(await person.client.get('/api/v1/users/me'), 401, 'unauthorized');
    // The user and their messages stay.
    expect(await s.rt.db('users').where({ id: person.id }).first('id')).to.deep.equal({ id: person.id });
    expect(expectOk(await ws.owner.get(`/api/v1/channels/${channel.id}/messages/${said.id}`)).data).to.include({ author_id: person.id, content: 'still here' });
    expectError(await new Client(s.url).post('/api/v1/auth/sign-in', { email: person.email, password: PASSWORD }), 401, 'invalid_credentials');

    const back = expectOk(await ws.owner.post(`${members}/${person.id}/reactivate`)).data;
    expect(back).to.include({ id: person.id, role: 'admin', is_agent: false });
    // Old keys stay dead; signing in gives a new one.
    expectError(await person.client.get('/api/v1/users/me'), 401, 'unauthorized');
    const signedIn = expectOk(await new Client(s.url).post('/api/v1/auth/sign-in', { email: person.email, password: PASSWORD })).data;
    const again = new Client(s.url, signedIn.api_key.key);
    expect(expectOk(await again.get('/api/v1/users/me')).data).to.include({ id: person.id, role: 'admin' });
    // Back in their DM (the same conversation), not in the channel they were taken out of.
    expect(expectOk(await ws.owner.post('/api/v1/dms', { user_ids: [person.id] }), 200).data.id).to.equal(dm.id);
    expect(expectOk(await again.get(`/api/v1/dms/${dm.id}/messages`)).data.map((m: { content: string }) => m.content)).to.deep.equal(['hello from the DM']);
    expectError(await again.post(`/api/v1/channels/${channel.id}/messages`, { content: 'x' }), 403, 'forbidden');
    expect(expectOk(await ws.owner.get(`${members}?limit=200`)).data.map((u: { id: string }) => u.id)).to.include(person.id);

    const audit = await auditOf('member.reactivated', person.id);
    expect(audit).to.have.length(1);
    expect(audit[0]).to.include({ actor_id: ws.ownerId, target_type: 'user' });
    // Bringing back someone active changes nothing and writes nothing.
    expect(expectOk(await ws.owner.post(`${members}/${person.id}/reactivate`)).data.id).to.equal(person.id);
    expect(await auditOf('member.reactivated', person.id)).to.have.length(1);
  });

  it('brings an agent back without its keys; an owner or admin makes it a new one', async () => {
    const bot = await ws.user({ is_agent: true });
    const botClient = bot.client;
    expectOk(await ws.owner.delete(`${members}/${bot.id}`), 204);
    expect(expectOk(await ws.owner.post(`${members}/${bot.id}/reactivate`)).data).to.include({ id: bot.id, role: 'member', is_agent: true });
    expectError(await botClient.get('/api/v1/users/me'), 401, 'unauthorized');
    expect(expectOk(await ws.owner.get(`/api/v1/users/${bot.id}/api-keys`)).data).to.deep.equal([]);
    const issued = expectOk(await ws.owner.post(`/api/v1/users/${bot.id}/api-keys`, { name: 'after reactivation' }), 201).data;
    expect(expectOk(await new Client(s.url, issued.key).get('/api/v1/users/me')).data.id).to.equal(bot.id);
  });

  it('lets only owners and admins reactivate (only an owner an owner); unknown users 404; a taken name 409', async () => {
    const admin = await ws.user({ role: 'admin' });
    const member = await ws.user();
    const gone = await ws.user({ name: uniqueName('gone') });
    const goneName = (await s.rt.db('users').where({ id: gone.id }).first('name')).name as string;
    const owner2 = await ws.user({ role: 'owner' });
    expectOk(await ws.owner.delete(`${members}/${gone.id}`), 204);
    expectOk(await ws.owner.delete(`${members}/${owner2.id}`), 204);
    expectError(await member.client.post(`${members}/${gone.id}/reactivate`), 403, 'forbidden');
    expectError(await admin.client.post(`${members}/${owner2.id}/reactivate`), 403, 'forbidden');
    expectError(await admin.client.post(`${members}/00000000-0000-4000-8000-000000000000/reactivate`), 404, 'not_found');
    expectError(await admin.client.post(`${members}/nope/reactivate`), 404, 'not_found');
    // Someone else in another workspace is nobody here.
    const other = await newWorkspace(s);
    expectError(await other.owner.post(`${members}/${gone.id}/reactivate`), 404, 'not_found');
    // Someone took the name meanwhile.
    const taker = expectOk(await ws.owner.post('/api/v1/users', { name: goneName }), 201).data;
    expectError(await admin.client.post(`${members}/${gone.id}/reactivate`), 409, 'name_taken');
    expectOk(await ws.owner.delete(`${members}/${taker.id}`), 204);
    expect(expectOk(await admin.client.post(`${members}/${gone.id}/reactivate`)).data.id).to.equal(gone.id);
    expect(expectOk(await ws.owner.post(`${members}/${owner2.id}/reactivate`)).data.role).to.equal('owner');
    expect(await s.rt.db('users').where({ id: member.id }).first('deactivated_at')).to.deep.equal({ deactivated_at: null });
  });

  it("lets owners and admins list and revoke an agent's keys (audited); members, agents and people's keys: 403", async () => {
    const admin = await ws.user({ role: 'admin' });
    const member = await ws.user();
    const adminBot = await ws.user({ is_agent: true, role: 'admin' });
    const bot = await ws.user({ is_agent: true });
    const second = expectOk(await bot.client.post('/api/v1/api-keys', { name: 'second' }), 201).data;
    const keysUrl = `/api/v1/users/${bot.id}/api-keys`;
    const listed = expectOk(await admin.client.get(keysUrl)).data as { id: string; name: string }[];
    expect(listed.map((k) => k.name)).to.deep.equal(['initial key', 'second']);
    expect(Object.keys(listed[0]!).sort()).to.deep.equal(['conversation_ids', 'created_at', 'expires_at', 'id', 'name', 'prefix', 'scopes']);

    for (const who of [member.client, adminBot.client]) {
      expectError(await who.get(keysUrl), 403, 'forbidden');
      expectError(await who.delete(`${keysUrl}/${second.id}`), 403, 'forbidden');
      expectError(await who.post(keysUrl, { name: 'x' }), 403, 'forbidden');
    }
    expectError(await admin.client.get(`/api/v1/users/${member.id}/api-keys`), 403, 'forbidden');
    expectError(await admin.client.get('/api/v1/users/00000000-0000-4000-8000-000000000000/api-keys'), 404, 'not_found');
    // A key of someone else under this agent's path: 404.
    const memberKey = expectOk(await member.client.get('/api/v1/api-keys')).data[0].id;
    expectError(await admin.client.delete(`${keysUrl}/${memberKey}`), 404, 'not_found');
    expectOk(await member.client.get('/api/v1/users/me'));

    // The first key, revoked, takes the key made from it along (revokeKeyTrees).
    expectOk(await admin.client.delete(`${keysUrl}/${listed[0]!.id}`), 204);
    expectError(await bot.client.get('/api/v1/users/me'), 401, 'unauthorized');
    expectError(await new Client(s.url, second.key).get('/api/v1/users/me'), 401, 'unauthorized');
    expect(expectOk(await ws.owner.get(keysUrl)).data).to.deep.equal([]);
    expectError(await admin.client.delete(`${keysUrl}/${listed[0]!.id}`), 404, 'not_found');
    const audit = await auditOf('api_key.revoked', listed[0]!.id);
    expect(audit).to.have.length(1);
    expect(audit[0]).to.include({ actor_id: admin.id });
    expect(audit[0].details).to.deep.equal({ user_id: bot.id });
  });
});
