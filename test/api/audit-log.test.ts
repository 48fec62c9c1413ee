// The audit log (contract §16, any level; docs/operations.md "Audit log"):
// GET /audit-log for owners and admins, one entry per security-relevant
// action written in the action's own transaction by the one writer
// (services/core/audit/audit.store.ts), none for a refused action, never a
// secret in it.
import { expect } from 'chai';
import { Client, serverLevels } from '../support/client.js';
import { FAST_DELIVERY, startReceiver, type Receiver } from '../support/receiver.js';
import { separateStack } from '../support/separate-stack.js';
import { expectError, expectOk } from '../support/expect.js';
import { PASSWORD, clearSignInFailures, invite, uniqueEmail } from '../support/sign-in.js';
import { level3Stack, newWorkspace, stack, uniqueName, type TestWorkspace } from '../support/stack.js';

interface Entry {
  id: string;
  action: string;
  actor_id: string | null;
  actor_is_agent: boolean;
  target_type: string | null;
  target_id: string | null;
  ip: string | null;
  user_agent: string | null;
  details: Record<string, unknown>;
  created_at: string;
}

const UA = { 'user-agent': 'audit-test/1.0' };

async function entries(ws: TestWorkspace, query = ''): Promise<Entry[]> {
  return expectOk(await ws.owner.get(`/api/v1/audit-log${query}`)).data as Entry[];
}

const only = async (ws: TestWorkspace, action: string) => (await entries(ws, `?action=${action}`)).filter((e) => e.action === action);

describe('GET /audit-log', () => {
  it('records keys made and revoked with who, from where and what, and never the key itself', async () => {
    const ws = await newWorkspace();
    const key = expectOk(await ws.owner.post('/api/v1/api-keys', { name: 'ci key' }, UA), 201).data;
    expect((await ws.owner.delete(`/api/v1/api-keys/${key.id}`, UA)).status).to.equal(204);
    const [revoked, created] = await entries(ws);
    expect(created).to.include({ action: 'api_key.created', actor_id: ws.ownerId, actor_is_agent: false, target_type: 'api_key', target_id: key.id, user_agent: 'audit-test/1.0' });
    expect(created!.ip).to.match(/127\.0\.0\.1|::1/);
    expect(created!.details).to.deep.equal({ name: 'ci key', prefix: key.prefix, expires_at: null });
    expect(created).to.have.all.keys('id', 'action', 'actor_id', 'actor_is_agent', 'target_type', 'target_id', 'ip', 'user_agent', 'details', 'created_at');
    expect(revoked).to.include({ action: 'api_key.revoked', target_id: key.id, actor_id: ws.ownerId });
    const stored = await stack().rt.db('audit_log').where({ workspace_id: ws.workspaceId });
    expect(JSON.stringify(stored)).not.to.include(key.key);
  });

  it('records users and agents made, roles changed and members removed', async () => {
    const ws = await newWorkspace();
    const bot = await ws.user({ is_agent: true });
    const person = await ws.user();
    expectOk(await ws.owner.patch(`/api/v1/workspaces/current/members/${person.id}`, { role: 'admin' }));
    // The same role again changes nothing and records nothing.
    expectOk(await ws.owner.patch(`/api/v1/workspaces/current/members/${person.id}`, { role: 'admin' }));
    expect((await ws.owner.delete(`/api/v1/workspaces/current/members/${bot.id}`)).status).to.equal(204);
    const made = await only(ws, 'user.created');
    expect(made.map((e) => e.target_id)).to.have.members([bot.id, person.id]);
    expect(made.find((e) => e.target_id === bot.id)!.details).to.include({ is_agent: true, role: 'member' });
    expect(JSON.stringify(made)).not.to.include(bot.key);
    const roles = await only(ws, 'member.role_changed');
    expect(roles).to.have.length(1);
    expect(roles[0]).to.deep.include({ target_id: person.id, details: { from: 'member', to: 'admin' } });
    const removed = await only(ws, 'member.removed');
    expect(removed).to.have.length(1);
    expect(removed[0]).to.include({ target_type: 'user', target_id: bot.id, actor_id: ws.ownerId });
    expect(removed[0]!.details).to.include({ is_agent: true });
  });

  it("records an agent's own actions as an agent's", async () => {
    const ws = await newWorkspace();
    const bot = await ws.user({ is_agent: true });
    expectOk(await bot.client.post('/api/v1/api-keys', { name: 'second' }), 201);
    const [entry] = await only(ws, 'api_key.created');
    expect(entry).to.include({ actor_id: bot.id, actor_is_agent: true });
  });

  it("records hooks made and deleted without the hook's id, which is its secret address", async () => {
    const ws = await newWorkspace();
    const channel = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('audit') }), 201).data;
    const hook = expectOk(await ws.owner.post('/api/v1/webhooks/incoming', { channel_id: channel.id, name: 'CI' }), 201).data;
    expect((await ws.owner.delete(`/api/v1/webhooks/incoming/${hook.id}`)).status).to.equal(204);
    const [deleted, created] = await entries(ws, '?limit=2');
    expect(created).to.deep.include({ action: 'webhook.created', target_type: 'webhook', details: { name: 'CI', channel_id: channel.id } });
    expect(deleted).to.include({ action: 'webhook.deleted', target_type: 'webhook', target_id: created!.target_id });
    const stored = await stack().rt.db('audit_log').where({ workspace_id: ws.workspaceId });
    expect(JSON.stringify(stored)).not.to.include(hook.id);
  });

  it('records retention changes of the workspace and of a channel, with before and after', async () => {
    const ws = await newWorkspace();
    const channel = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('kept') }), 201).data;
    expectOk(await ws.owner.patch('/api/v1/workspaces/current', { settings: { retention_days: 30 } }));
    expectOk(await ws.owner.patch('/api/v1/workspaces/current', { settings: { retention_days: null } }));
    expectOk(await ws.owner.patch(`/api/v1/channels/${channel.id}`, { retention_days: 7 }));
    const changes = await only(ws, 'retention.changed');
    expect(changes.map((e) => [e.target_type, e.details])).to.deep.equal([
      ['channel', { from: 'workspace', to: 7 }],
      ['workspace', { from: 30, to: null }],
      ['workspace', { from: null, to: 30 }],
    ]);
  });

  it('records nothing for a refused action', async () => {
    const ws = await newWorkspace();
    const member = await ws.user();
    const other = await ws.user();
    const before = (await entries(ws)).length;
    expectError(await member.client.patch(`/api/v1/workspaces/current/members/${other.id}`, { role: 'admin' }), 403, 'forbidden');
    expectError(await member.client.delete(`/api/v1/workspaces/current/members/${other.id}`), 403, 'forbidden');
    expectError(await member.client.patch('/api/v1/workspaces/current', { settings: { retention_days: 1 } }), 403, 'forbidden');
    const ownKeys = expectOk(await ws.owner.get('/api/v1/api-keys')).data;
    expectError(await member.client.delete(`/api/v1/api-keys/${ownKeys[0].id}`), 404, 'not_found');
    expectError(await ws.owner.patch(`/api/v1/workspaces/current/members/${ws.ownerId}`, { role: 'member' }), 409, 'conflict');
    expect((await entries(ws)).length).to.equal(before);
  });

  it('rolls the entry back with its action when the transaction fails, and the action back with its entry', async () => {
    const ws = await newWorkspace();
    const db = stack().rt.db;
    const doomed = uniqueName('doomed');
    // Fails the commit of any transaction whose audit entry names this key: the
    // key, written first in the same transaction, must not stay either.
    await db.raw(`
      CREATE FUNCTION audit_test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'refused by the test'; END $$;
      CREATE CONSTRAINT TRIGGER audit_test_refuse AFTER INSERT ON audit_log DEFERRABLE INITIALLY DEFERRED
        FOR EACH ROW WHEN (NEW.details->>'name' = '${doomed}') EXECUTE FUNCTION audit_test_refuse();
    `);
    try {
      expectError(await ws.owner.post('/api/v1/api-keys', { name: doomed }), 500, 'internal_error');
    } finally {
      await db.raw('DROP TRIGGER audit_test_refuse ON audit_log; DROP FUNCTION audit_test_refuse()');
    }
    expect(await db('api_keys').where({ user_id: ws.ownerId, name: doomed })).to.have.length(0);
    expect(await only(ws, 'api_key.created')).to.have.length(0);
    // And the same action, not refused, keeps both.
    expectOk(await ws.owner.post('/api/v1/api-keys', { name: doomed }), 201);
    expect(await only(ws, 'api_key.created')).to.have.length(1);
  });

  it('pages newest first with cursors, and filters by action, actor and time', async () => {
    const ws = await newWorkspace();
    const admin = await ws.user({ role: 'admin' });
    for (let i = 0; i < 5; i++) expectOk(await ws.owner.post('/api/v1/api-keys', { name: `k${i}` }), 201);
    for (let i = 0; i < 2; i++) expectOk(await admin.client.post('/api/v1/api-keys', { name: `a${i}` }), 201);
    const all = await entries(ws, '?limit=200');
    expect(all).to.have.length(8); // the admin's creation, then seven keys
    const seen: Entry[] = [];
    let cursor: string | null = null;
    do {
      const page = expectOk(await ws.owner.get(`/api/v1/audit-log?limit=3${cursor ? `&cursor=${cursor}` : ''}`));
      seen.push(...page.data);
      expect(page.pagination.has_more).to.equal(page.pagination.next_cursor !== null);
      cursor = page.pagination.next_cursor;
    } while (cursor);
    expect(seen.map((e) => e.id)).to.deep.equal(all.map((e) => e.id));
    expect(all.map((e) => e.details.name).slice(0, 7)).to.deep.equal(['a1', 'a0', 'k4', 'k3', 'k2', 'k1', 'k0']);

    const byAdmin = await entries(ws, `?actor_id=${admin.id}`);
    expect(byAdmin.map((e) => e.details.name)).to.deep.equal(['a1', 'a0']);
    const keys = await entries(ws, '?action=api_key.created&limit=200');
    expect(keys).to.have.length(7);
    const users = await entries(ws, '?action=user.created');
    expect(users.map((e) => e.target_id)).to.deep.equal([admin.id]);

    // Backdate the oldest key's entry: since/until select by time.
    const oldest = all[all.length - 2]!;
    await stack().rt.db('audit_log').where({ id: oldest.id }).update({ created_at: new Date('2020-01-01T00:00:00Z') });
    const early = await entries(ws, `?until=${encodeURIComponent('2021-01-01T00:00:00Z')}`);
    expect(early.map((e) => e.id)).to.deep.equal([oldest.id]);
    const late = await entries(ws, `?since=${encodeURIComponent('2021-01-01T00:00:00Z')}&limit=200`);
    expect(late.map((e) => e.id)).to.not.include(oldest.id);
    expect(late).to.have.length(7);
  });

  it('answers 403 to members and agents, and 400 to a bad filter', async () => {
    const ws = await newWorkspace();
    const member = await ws.user();
    const bot = await ws.user({ is_agent: true });
    expectError(await member.client.get('/api/v1/audit-log'), 403, 'forbidden');
    expectError(await bot.client.get('/api/v1/audit-log'), 403, 'forbidden');
    const admin = await ws.user({ role: 'admin' });
    expectOk(await admin.client.get('/api/v1/audit-log'));
    expectError(await ws.owner.get('/api/v1/audit-log?action=nope'), 400, 'validation_error');
    expectError(await ws.owner.get('/api/v1/audit-log?since=yesterday'), 400, 'validation_error');
    expectError(await ws.owner.get('/api/v1/audit-log?actor_id=1'), 400, 'validation_error');
  });

  it("shows one workspace's entries only", async () => {
    const a = await newWorkspace();
    const b = await newWorkspace();
    expectOk(await b.owner.post('/api/v1/api-keys', { name: 'elsewhere' }), 201);
    expect(await entries(a)).to.have.length(0);
  });
});

describe('GET /audit-log: signing in (level 3)', function () {
  this.timeout(30_000);

  it('records sign-ins and failures, invites made, revoked and accepted, and password changes', async () => {
    const s = await level3Stack();
    await clearSignInFailures(s);
    const ws = await newWorkspace(s);
    const anon = new Client(s.url);
    const made = await invite(ws.owner, { role: 'admin' });
    const revocable = await invite(ws.owner);
    expect((await ws.owner.delete(`/api/v1/invites/${revocable.id}`)).status).to.equal(204);
    const email = uniqueEmail();
    const accepted = expectOk(await anon.post('/api/v1/auth/accept-invite', { token: made.token, name: uniqueName('p'), email, password: PASSWORD }, UA), 201).data;
    const personId = accepted.user.id;
    expectError(await anon.post('/api/v1/auth/sign-in', { email, password: 'not the password' }, UA), 401, 'invalid_credentials');
    expectError(await anon.post('/api/v1/auth/sign-in', { email: uniqueEmail('nobody'), password: PASSWORD }), 401, 'invalid_credentials');
    const signed = expectOk(await anon.post('/api/v1/auth/sign-in', { email, password: PASSWORD }, UA)).data;
    const person = new Client(s.url, signed.api_key.key);
    expectOk(await person.patch('/api/v1/users/me', { password: 'another good password', current_password: PASSWORD }));
    const resetLink = expectOk(await ws.owner.post(`/api/v1/workspaces/current/members/${personId}/password-reset`), 201).data;
    await clearSignInFailures(s);

    const log = expectOk(await ws.owner.get('/api/v1/audit-log?limit=200')).data as Entry[];
    const actions = log.map((e) => e.action).reverse();
    expect(actions).to.deep.equal(['invite.created', 'invite.created', 'invite.revoked', 'invite.accepted', 'auth.sign_in_failed', 'auth.signed_in', 'auth.password_changed', 'auth.password_reset_link_created']);
    const byAction = (a: string) => log.find((e) => e.action === a)!;
    expect(byAction('invite.accepted')).to.include({ actor_id: personId, target_type: 'invite', target_id: made.id, user_agent: 'audit-test/1.0' });
    expect(byAction('invite.revoked')).to.include({ target_id: revocable.id });
    expect(byAction('auth.sign_in_failed')).to.deep.include({ actor_id: null, target_type: 'user', target_id: personId, user_agent: 'audit-test/1.0', details: { method: 'password' } });
    expect(byAction('auth.signed_in')).to.deep.include({ actor_id: personId, details: { method: 'password', api_key_id: signed.api_key.id } });
    expect(byAction('auth.password_changed')).to.include({ actor_id: personId, target_id: personId });
    expect(byAction('auth.password_reset_link_created')).to.include({ actor_id: ws.ownerId, target_id: personId });
    const stored = JSON.stringify(await s.rt.db('audit_log').where({ workspace_id: ws.workspaceId }));
    const resetCode = new URL(resetLink.url).hash.replace(/^#reset=/, '');
    for (const secret of [made.token, revocable.token, PASSWORD, 'another good password', signed.api_key.key, accepted.api_key.key, resetCode]) expect(stored).not.to.include(secret);
  });
});

describe('GET /audit-log: event subscriptions (level 3)', function () {
  this.timeout(60_000);
  let s: Awaited<ReturnType<typeof separateStack>>;
  let receiver: Receiver;

  before(async () => {
    s = await separateStack(FAST_DELIVERY);
    serverLevels.set(s.stack.url, '3');
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver?.close();
    serverLevels.delete(s.stack.url);
    await s?.stop();
  });

  it("records subscriptions made, their secret rotated and deleted, with the URL's host only and never the secret", async () => {
    const ws = await newWorkspace(s.stack);
    const bot = await ws.user({ is_agent: true });
    const url = `${receiver.url}/hooks/receiver-token-123?token=abc`;
    const created = expectOk(await bot.client.post('/api/v1/event-subscriptions', { url }), 201).data;
    const rotated = expectOk(await bot.client.post(`/api/v1/event-subscriptions/${created.id}/rotate-secret`)).data;
    expect((await ws.owner.delete(`/api/v1/event-subscriptions/${created.id}?all=true`)).status).to.equal(204);
    const log = (expectOk(await ws.owner.get('/api/v1/audit-log')).data as Entry[]).filter((e) => e.action.startsWith('event_subscription.'));
    expect(log.map((e) => [e.action, e.actor_id])).to.deep.equal([
      ['event_subscription.deleted', ws.ownerId],
      ['event_subscription.secret_rotated', bot.id],
      ['event_subscription.created', bot.id],
    ]);
    expect(log.every((e) => e.target_id === created.id)).to.equal(true);
    expect(log[2]!.actor_is_agent).to.equal(true);
    expect(log[2]!.details.host).to.equal(new URL(url).host);
    expect(log[0]!.details).to.include({ owner_id: bot.id });
    const stored = JSON.stringify(await s.stack.rt.db('audit_log').where({ workspace_id: ws.workspaceId }));
    for (const secret of [created.secret, rotated.secret, 'receiver-token-123', 'token=abc']) expect(stored).not.to.include(secret);
  });
});
