// Authority ends with whoever granted it (issue 33; docs/security.md,
// "Derived credentials"): a credential made from another is bounded by it
// (expiry, session, revocation), and an invite or a reset link is checked
// against its maker's authority when it is used.
import { expect } from 'chai';
import type { Stack } from '../../services/stack.js';
import { Client } from '../support/client.js';
import { expectError, expectOk } from '../support/expect.js';
import { PASSWORD, clearSignInFailures, invite, personByInvite, uniqueEmail } from '../support/sign-in.js';
import { level3Stack, newWorkspace, stack, uniqueName } from '../support/stack.js';

const codeOf = (url: string) => new URL(url).hash.replace(/^#(code|reset|invite)=/, '');

describe('derived credentials (level 3)', () => {
  let s: Stack;
  let anon: Client;

  before(async () => {
    s = await level3Stack();
    anon = new Client(s.url);
  });
  afterEach(() => clearSignInFailures(s));

  const accept = (token: string) => anon.post('/api/v1/auth/accept-invite', { token, name: uniqueName('p'), email: uniqueEmail(), password: PASSWORD });
  const demote = (by: Client, userId: string, role: string) => by.patch(`/api/v1/workspaces/current/members/${userId}`, { role });
  const mint = async (by: Client, body: Record<string, unknown> = {}) => expectOk(await by.post('/api/v1/api-keys', { name: uniqueName('k'), ...body }), 201).data;
  const alive = async (key: string) => (await new Client(s.url, key).get('/api/v1/users/me')).status;

  describe('an invite is worth what its maker may grant when it is used', () => {
    it('grants nothing once its admin maker is demoted to member (403), whatever its role', async () => {
      const ws = await newWorkspace(s);
      const admin = await personByInvite(s, ws, { role: 'admin' });
      const forAdmin = await invite(admin.client, { role: 'admin' });
      const forMember = await invite(admin.client, { role: 'member' });
      const control = await invite(admin.client, { role: 'member' });
      expectOk(await accept(control.token), 201); // while the maker is admin, it works
      expectOk(await demote(ws.owner, admin.id, 'member'));
      for (const made of [forAdmin, forMember]) expectError(await accept(made.token), 403, 'forbidden');
      // and nobody was made
      const names = expectOk(await ws.owner.get('/api/v1/users?limit=200')).data.map((u: { role: string }) => u.role);
      expect(names.filter((r: string) => r === 'admin')).to.have.length(0);
    });

    it("an owner's invite to be owner grants nothing once the owner is only an admin; an admin role still is", async () => {
      const ws = await newWorkspace(s);
      const second = await personByInvite(s, ws, { role: 'owner' });
      const forOwner = await invite(second.client, { role: 'owner' });
      const forAdmin = await invite(second.client, { role: 'admin' });
      expectOk(await demote(ws.owner, second.id, 'admin'));
      expectError(await accept(forOwner.token), 403, 'forbidden');
      expect(expectOk(await accept(forAdmin.token), 201).data.user.role).to.equal('admin');
    });

    it("grants nothing once its maker is removed", async () => {
      const ws = await newWorkspace(s);
      const admin = await personByInvite(s, ws, { role: 'admin' });
      const made = await invite(admin.client);
      expectOk(await ws.owner.delete(`/api/v1/workspaces/current/members/${admin.id}`), 204);
      const res = await accept(made.token);
      expect([400, 403]).to.include(res.status); // revoked with its maker (invite_invalid), and refused at use either way
    });
  });

  describe("a password-reset link is worth what its maker may do when it is used", () => {
    const resetLink = async (by: Client, userId: string) => codeOf(expectOk(await by.post(`/api/v1/workspaces/current/members/${userId}/password-reset`), 201).data.url);
    const reset = (code: string) => anon.post('/api/v1/auth/reset-password', { code, password: 'taken over, long enough' });

    it('is refused once its maker is removed, and once its maker is demoted', async () => {
      const ws = await newWorkspace(s);
      const victim = await personByInvite(s, ws);
      for (const end of ['remove', 'demote'] as const) {
        const admin = await personByInvite(s, ws, { role: 'admin' });
        const code = await resetLink(admin.client, victim.id);
        if (end === 'remove') expectOk(await ws.owner.delete(`/api/v1/workspaces/current/members/${admin.id}`), 204);
        else expectOk(await demote(ws.owner, admin.id, 'member'));
        expectError(await reset(code), 401, 'invalid_credentials');
        expect(await alive(victim.key), `${end}: the victim's session`).to.equal(200);
        expectOk(await anon.post('/api/v1/auth/sign-in', { email: victim.email, password: PASSWORD }));
      }
    });

    it('made by an owner for an admin is refused once that owner is only an admin', async () => {
      const ws = await newWorkspace(s);
      const owner2 = await personByInvite(s, ws, { role: 'owner' });
      const admin = await personByInvite(s, ws, { role: 'admin' });
      const code = await resetLink(owner2.client, admin.id);
      expectOk(await demote(ws.owner, owner2.id, 'admin'));
      expectOk(await demote(ws.owner, admin.id, 'owner')); // the target is now above the maker
      expectError(await reset(code), 401, 'invalid_credentials');
    });
  });

  describe('keys made from keys', () => {
    it('never expire after their parent: none, or a later expiry, becomes the parent’s; an earlier one stays', async () => {
      const ws = await newWorkspace(s);
      const soon = new Date(Date.now() + 60_000);
      const parent = await mint(ws.owner, { expires_at: soon.toISOString() });
      const p = new Client(s.url, parent.key);
      for (const body of [{}, { expires_at: null }, { expires_at: new Date(Date.now() + 365 * 86_400_000).toISOString() }]) {
        const child = await mint(p, body);
        expect(new Date(child.expires_at).getTime(), JSON.stringify(body)).to.equal(new Date(parent.expires_at).getTime());
        const grandchild = await mint(new Client(s.url, child.key));
        expect(new Date(grandchild.expires_at).getTime()).to.be.at.most(new Date(parent.expires_at).getTime());
      }
      const earlier = new Date(Date.now() + 30_000).toISOString();
      expect(new Date((await mint(p, { expires_at: earlier })).expires_at).toISOString()).to.equal(earlier);
      // a key without expiry gives what is asked
      expect((await mint(ws.owner)).expires_at).to.equal(null);
    });

    it('die with their parent, down the tree, and only those', async () => {
      const ws = await newWorkspace(s);
      const parent = await mint(ws.owner);
      const child = await mint(new Client(s.url, parent.key));
      const grandchild = await mint(new Client(s.url, child.key));
      const sibling = await mint(ws.owner);
      expectOk(await ws.owner.delete(`/api/v1/api-keys/${parent.id}`), 204);
      for (const k of [parent, child, grandchild]) expect(await alive(k.key), k.name).to.equal(401);
      expect(await alive(sibling.key)).to.equal(200);
      expect(await alive(ws.ownerKey)).to.equal(200);
    });

    it('revoked by one of its own children, the parent dies with its other children, and the revoking branch stays (a one-time link key exchanged by a browser)', async () => {
      const ws = await newWorkspace(s);
      const parent = await mint(ws.owner);
      const browser = await mint(new Client(s.url, parent.key));
      const fromBrowser = await mint(new Client(s.url, browser.key));
      const other = await mint(new Client(s.url, parent.key));
      expectOk(await new Client(s.url, browser.key).delete(`/api/v1/api-keys/${parent.id}`), 204);
      for (const k of [parent, other]) expect(await alive(k.key), k.name).to.equal(401);
      for (const k of [browser, fromBrowser]) expect(await alive(k.key), k.name).to.equal(200);
      // revoking itself, a key still takes what it made along
      expectOk(await new Client(s.url, browser.key).delete(`/api/v1/api-keys/${browser.id}`), 204);
      for (const k of [browser, fromBrowser]) expect(await alive(k.key), k.name).to.equal(401);
    });

    it('a sign-in link lives no longer than the key that made it, gives a key that does not either, and dies with it', async () => {
      const ws = await newWorkspace(s);
      const parent = await mint(ws.owner, { expires_at: new Date(Date.now() + 60_000).toISOString() });
      const p = new Client(s.url, parent.key);
      const link = expectOk(await p.post('/api/v1/auth/links'), 201).data;
      expect(new Date(link.expires_at).getTime()).to.be.at.most(new Date(parent.expires_at).getTime());
      const signedIn = expectOk(await anon.post('/api/v1/auth/exchange', { code: codeOf(link.url) })).data;
      expect(new Date(signedIn.api_key.expires_at).getTime(), 'not 30 days').to.be.at.most(new Date(parent.expires_at).getTime());
      // a link made, then its key revoked: dead; and the key the first link gave dies too
      const second = codeOf(expectOk(await p.post('/api/v1/auth/links'), 201).data.url);
      expectOk(await ws.owner.delete(`/api/v1/api-keys/${parent.id}`), 204);
      expectError(await anon.post('/api/v1/auth/exchange', { code: second }), 401, 'invalid_credentials');
      expect(await alive(signedIn.api_key.key)).to.equal(401);
    });

    it('made from a web session end when a password change or a reset ends that session', async () => {
      const ws = await newWorkspace(s);
      const person = await personByInvite(s, ws);
      const signIn = async (password: string) => expectOk(await anon.post('/api/v1/auth/sign-in', { email: person.email, password })).data.api_key.key as string;
      const other = await signIn(PASSWORD);
      const fromOther = await mint(new Client(s.url, other));
      const fromFromOther = await mint(new Client(s.url, fromOther.key));
      const linked = expectOk(await anon.post('/api/v1/auth/exchange', { code: codeOf(expectOk(await new Client(s.url, other).post('/api/v1/auth/links'), 201).data.url) })).data.api_key;
      const fromMine = await mint(person.client);
      const NEW = 'a changed passphrase here';
      expectOk(await person.client.patch('/api/v1/users/me', { password: NEW, current_password: PASSWORD }));
      for (const [what, key] of [['other session', other], ['its key', fromOther.key], ["its key's key", fromFromOther.key], ['its sign-in link', linked.key]]) {
        expect(await alive(key!), what).to.equal(401);
      }
      expect(await alive(person.key), 'the session changing it').to.equal(200);
      expect(await alive(fromMine.key), 'a key made from the session changing it').to.equal(200);

      // a reset ends every session, and what they made
      const code = codeOf(expectOk(await ws.owner.post(`/api/v1/workspaces/current/members/${person.id}/password-reset`), 201).data.url);
      expectOk(await anon.post('/api/v1/auth/reset-password', { code, password: 'reset again, long enough' }));
      for (const key of [person.key, fromMine.key]) expect(await alive(key)).to.equal(401);
    });
  });
});

describe('keys made from keys at level 2', () => {
  it('are as before: no bound from the parent, and revoking the parent leaves them', async () => {
    const ws = await newWorkspace(stack());
    const parent = expectOk(await ws.owner.post('/api/v1/api-keys', { name: 'p', expires_at: new Date(Date.now() + 60_000).toISOString() }), 201).data;
    const child = expectOk(await new Client(stack().url, parent.key).post('/api/v1/api-keys', { name: 'c' }), 201).data;
    expect(child.expires_at).to.equal(null);
    expectOk(await ws.owner.delete(`/api/v1/api-keys/${parent.id}`), 204);
    expectOk(await new Client(stack().url, child.key).get('/api/v1/users/me'));
  });
});
