// People signing in (contract §12, level 3; docs/security.md): invites,
// passwords and one-time codes, each ending in an ordinary API key.
import { expect } from 'chai';
import type { Stack } from '../../services/stack.js';
import { Client } from '../support/client.js';
import { expectError, expectOk } from '../support/expect.js';
import { PASSWORD, clearSignInFailures, invite, personByInvite, uniqueEmail } from '../support/sign-in.js';
import { level3Stack, newWorkspace, uniqueName } from '../support/stack.js';

describe('sign-in (level 3)', () => {
  let s: Stack;
  let anon: Client;

  before(async () => {
    s = await level3Stack();
    anon = new Client(s.url);
  });
  afterEach(() => clearSignInFailures(s));

  const accept = (body: Record<string, unknown>) => anon.post('/api/v1/auth/accept-invite', { name: uniqueName('p'), email: uniqueEmail(), password: PASSWORD, ...body });
  const signIn = (email: string, password: string) => anon.post('/api/v1/auth/sign-in', { email, password });

  describe('invites', () => {
    it('makes a link whose token is in the fragment, lists it without the token, and accepts it once', async () => {
      const ws = await newWorkspace(s);
      const created = expectOk(await ws.owner.post('/api/v1/invites', { role: 'admin' }), 201).data;
      expect(created).to.include({ role: 'admin', email: null, created_by: ws.ownerId });
      const url = new URL(created.url);
      expect(url.pathname).to.equal('/');
      expect(url.search).to.equal('');
      const token = url.hash.replace('#invite=', '');
      expect(token).to.match(/^[A-Za-z0-9_-]{43}$/);
      expect(new Date(created.expires_at).getTime() - Date.now()).to.be.within(167 * 3600e3, 168 * 3600e3 + 5000);

      const listed = expectOk(await ws.owner.get('/api/v1/invites')).data;
      expect(listed.map((i: { id: string }) => i.id)).to.deep.equal([created.id]);
      expect(listed[0]).to.not.have.property('url');

      const email = uniqueEmail();
      const joined = expectOk(await accept({ token, email, display_name: 'New Person' }), 201).data;
      expect(joined.user).to.include({ role: 'admin', email, display_name: 'New Person', is_agent: false });
      expect(joined.api_key.name).to.match(/^Web: \d{4}-\d{2}-\d{2}$/);
      expect(new Date(joined.api_key.expires_at).getTime() - Date.now()).to.be.within(29.9 * 86400e3, 30 * 86400e3 + 5000);
      const me = expectOk(await new Client(s.url, joined.api_key.key).get('/api/v1/users/me')).data;
      expect(me).to.include({ id: joined.user.id, email });

      expectError(await accept({ token }), 400, 'invite_invalid');
      expect(expectOk(await ws.owner.get('/api/v1/invites')).data).to.deep.equal([]);
    });

    it('answers invite_invalid for an unknown, revoked or expired token', async () => {
      const ws = await newWorkspace(s);
      expectError(await accept({ token: 'x'.repeat(43) }), 400, 'invite_invalid');
      const revoked = await invite(ws.owner);
      expectOk(await ws.owner.delete(`/api/v1/invites/${revoked.id}`), 204);
      expectError(await ws.owner.delete(`/api/v1/invites/${revoked.id}`), 404, 'not_found');
      expectError(await accept({ token: revoked.token }), 400, 'invite_invalid');
      const expired = await invite(ws.owner, { expires_in_hours: 1 });
      await s.rt.db('invites').where({ id: expired.id }).update({ expires_at: new Date(Date.now() - 1000) });
      expect(expectOk(await ws.owner.get('/api/v1/invites')).data).to.deep.equal([]);
      expectError(await accept({ token: expired.token }), 400, 'invite_invalid');
    });

    it('accepts an invite bound to an email only from that address, in any case', async () => {
      const ws = await newWorkspace(s);
      const email = uniqueEmail();
      const bound = await invite(ws.owner, { email });
      expect(bound.body.email).to.equal(email);
      expectError(await accept({ token: bound.token, email: uniqueEmail() }), 400, 'invite_invalid');
      const joined = expectOk(await accept({ token: bound.token, email: email.toUpperCase() }), 201).data;
      expect(joined.user.role).to.equal('member');
    });

    it('counts toward max_users', async () => {
      const ws = await newWorkspace(s);
      expectOk(await ws.owner.patch('/api/v1/workspaces/current', { settings: { max_users: 1 } }));
      const full = await invite(ws.owner);
      expectError(await accept({ token: full.token }), 403, 'user_limit_reached');
      // The seat was not taken: the invite still works once there is room.
      expectOk(await ws.owner.patch('/api/v1/workspaces/current', { settings: { max_users: 2 } }));
      expectOk(await accept({ token: full.token }), 201);
    });

    it('is made, listed and revoked by owners and admins only, and an owner invite only by an owner', async () => {
      const ws = await newWorkspace(s);
      const member = await ws.user();
      const admin = await ws.user({ role: 'admin' });
      const bot = await ws.user({ is_agent: true, role: 'admin' });
      expectError(await member.client.post('/api/v1/invites', {}), 403, 'forbidden');
      expectError(await member.client.get('/api/v1/invites'), 403, 'forbidden');
      expectError(await bot.client.post('/api/v1/invites', {}), 403, 'forbidden');
      expectError(await admin.client.post('/api/v1/invites', { role: 'owner' }), 403, 'forbidden');
      const made = await invite(admin.client);
      expectError(await member.client.delete(`/api/v1/invites/${made.id}`), 403, 'forbidden');
      expectOk(await ws.owner.post('/api/v1/invites', { role: 'owner' }), 201);
      // Another workspace's invite is not found.
      const other = await newWorkspace(s);
      expectError(await other.owner.delete(`/api/v1/invites/${made.id}`), 404, 'not_found');
    });

    it('spends no password hash on a made-up invite token or reset code', async () => {
      const hashes = async () => (await s.rt.metrics.passwordChecks.get()).values.find((v) => v.metricName === 'axid_password_check_seconds_count')!.value;
      const before = await hashes();
      expectError(await accept({ token: 'y'.repeat(43) }), 400, 'invite_invalid');
      expectError(await anon.post('/api/v1/auth/reset-password', { code: 'z'.repeat(43), password: PASSWORD }), 401, 'invalid_credentials');
      expect(await hashes()).to.equal(before);
    });

    it('rejects bad input with the field named', async () => {
      const ws = await newWorkspace(s);
      for (const body of [{ role: 'god' }, { expires_in_hours: 0 }, { expires_in_hours: 721 }, { email: 'not-an-email' }, { extra: 1 }]) {
        expectError(await ws.owner.post('/api/v1/invites', body), 400, 'validation_error');
      }
    });
  });

  describe('passwords', () => {
    it('must be 12 to 256 characters', async () => {
      const ws = await newWorkspace(s);
      for (const password of ['', 'a'.repeat(11), 'a'.repeat(257)]) {
        const { token } = await invite(ws.owner);
        const res = await accept({ token, password });
        expectError(res, 400, 'validation_error');
        expect(res.body.error.message).to.match(/password/);
      }
      const { token } = await invite(ws.owner);
      expectOk(await accept({ token, password: 'a'.repeat(12) }), 201);
      const { token: longest } = await invite(ws.owner);
      expectOk(await accept({ token: longest, password: '🔑'.repeat(128) }), 201);
    });

    it('are stored as scrypt hashes with their parameters, never as sent', async () => {
      const ws = await newWorkspace(s);
      const person = await personByInvite(s, ws);
      const row = await s.rt.db('users').where({ id: person.id }).first('password_hash');
      expect(row.password_hash).to.match(/^\$scrypt\$ln=12,r=8,p=2\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
      expect(row.password_hash).to.not.include(PASSWORD);
    });

    it('signs in with a new 30-day web key, the email in any case', async () => {
      const ws = await newWorkspace(s);
      const person = await personByInvite(s, ws);
      const body = expectOk(await signIn(person.email.toUpperCase(), PASSWORD)).data;
      expect(body.user).to.include({ id: person.id, email: person.email });
      expect(body.api_key.key).to.not.equal(person.key);
      expect(body.api_key.name).to.equal(`Web: ${new Date().toISOString().slice(0, 10)}`);
      expectOk(await new Client(s.url, body.api_key.key).get('/api/v1/users/me'));
    });

    it('answers invalid_credentials to a wrong password and an unknown email alike, both after one hash', async () => {
      const ws = await newWorkspace(s);
      const person = await personByInvite(s, ws);
      const checks = async () => (await s.rt.metrics.passwordChecks.get()).values.find((v) => v.metricName === 'axid_password_check_seconds_count')!.value;
      const times = { wrong: [] as number[], unknown: [] as number[] };
      for (let i = 0; i < 50; i++) {
        for (const kind of ['wrong', 'unknown'] as const) {
          const before = await checks();
          const started = process.hrtime.bigint();
          const res = kind === 'wrong' ? await signIn(person.email, 'not the password at all') : await signIn(uniqueEmail('nobody'), PASSWORD);
          times[kind].push(Number(process.hrtime.bigint() - started) / 1e6);
          expectError(res, 401, 'invalid_credentials');
          expect(res.body.error.message).to.equal('the email or the password is wrong');
          expect(await checks(), `${kind} email runs one password hash`).to.equal(before + 1);
        }
        await clearSignInFailures(s);
      }
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
      const [wrong, unknown] = [median(times.wrong), median(times.unknown)];
      // A measurement, not an assertion (timings on a shared machine are noisy): docs/security.md.
      console.log(`      sign-in median over 50 tries: wrong password ${wrong.toFixed(1)} ms, unknown email ${unknown.toFixed(1)} ms (ratio ${(unknown / wrong).toFixed(2)})`);
    });

    it('answers 429 with the rate-limit headers after 10 failures for one email, even to the right password', async () => {
      const ws = await newWorkspace(s);
      const person = await personByInvite(s, ws);
      for (let i = 0; i < 10; i++) expectError(await signIn(person.email, 'wrong password here'), 401, 'invalid_credentials');
      for (const password of ['wrong password here', PASSWORD]) {
        const res = await signIn(person.email, password);
        expectError(res, 429, 'rate_limited');
        expect(res.headers.get('x-ratelimit-limit')).to.equal('10');
        expect(res.headers.get('x-ratelimit-remaining')).to.equal('0');
        expect(Number(res.headers.get('x-ratelimit-reset'))).to.be.within(Date.now() / 1000, Date.now() / 1000 + 15 * 60 + 1);
        expect(Number(res.headers.get('retry-after'))).to.be.within(1, 15 * 60);
      }
    });

    it('answers 429 after 10 failures from one client address, whatever the emails', async () => {
      for (let i = 0; i < 10; i++) expectError(await signIn(uniqueEmail('spray'), 'some password'), 401, 'invalid_credentials');
      expectError(await signIn(uniqueEmail('spray'), 'some password'), 429, 'rate_limited');
    });

    it('changes with the current password and ends the other web keys, not the caller’s or other keys', async () => {
      const ws = await newWorkspace(s);
      const person = await personByInvite(s, ws);
      const other = expectOk(await signIn(person.email, PASSWORD)).data.api_key.key;
      const cli = expectOk(await person.client.post('/api/v1/api-keys', { name: 'cli' }), 201).data.key;
      const NEW = 'a brand new passphrase';
      expectError(await person.client.patch('/api/v1/users/me', { password: NEW }), 400, 'validation_error');
      expectError(await person.client.patch('/api/v1/users/me', { password: NEW, current_password: 'not it at all' }), 400, 'validation_error');
      expectError(await person.client.patch('/api/v1/users/me', { password: 'short', current_password: PASSWORD }), 400, 'validation_error');
      expectOk(await person.client.patch('/api/v1/users/me', { password: NEW, current_password: PASSWORD }));
      expectError(await new Client(s.url, other).get('/api/v1/users/me'), 401, 'unauthorized');
      expectOk(await person.client.get('/api/v1/users/me'));
      expectOk(await new Client(s.url, cli).get('/api/v1/users/me'));
      expectError(await signIn(person.email, PASSWORD), 401, 'invalid_credentials');
      expectOk(await signIn(person.email, NEW));
    });

    it('lets a person without one set a first password, and never an agent', async () => {
      const ws = await newWorkspace(s);
      const member = await ws.user();
      expectOk(await ws.owner.patch(`/api/v1/workspaces/current/members/${member.id}`, { email: 'First.Pass@example.test' }));
      expectOk(await member.client.patch('/api/v1/users/me', { password: PASSWORD }));
      expectOk(await signIn('first.pass@example.test', PASSWORD));
      const bot = await ws.user({ is_agent: true });
      expectError(await bot.client.patch('/api/v1/users/me', { password: PASSWORD }), 403, 'forbidden');
    });
  });

  describe('email', () => {
    it('is seen by the person and by owners and admins only', async () => {
      const ws = await newWorkspace(s);
      const person = await personByInvite(s, ws);
      const member = await ws.user();
      const admin = await ws.user({ role: 'admin' });
      expect(expectOk(await person.client.get('/api/v1/users/me')).data.email).to.equal(person.email);
      expect(expectOk(await member.client.get(`/api/v1/users/${person.id}`)).data).to.not.have.property('email');
      const seenByMember = expectOk(await member.client.get('/api/v1/users')).data;
      for (const u of seenByMember) if (u.id !== member.id) expect(u, u.name).to.not.have.property('email');
      expect(seenByMember.find((u: { id: string }) => u.id === member.id).email).to.equal(null);
      for (const viewer of [ws.owner, admin.client]) {
        expect(expectOk(await viewer.get(`/api/v1/users/${person.id}`)).data.email).to.equal(person.email);
        const listed = expectOk(await viewer.get('/api/v1/workspaces/current/members')).data;
        expect(listed.find((u: { id: string }) => u.id === person.id).email).to.equal(person.email);
      }
    });

    it('is set by owners and admins on a member, unique in the workspace whatever its case', async () => {
      const ws = await newWorkspace(s);
      const person = await personByInvite(s, ws);
      const member = await ws.user();
      const email = uniqueEmail('set');
      expect(expectOk(await ws.owner.patch(`/api/v1/workspaces/current/members/${member.id}`, { email })).data).to.include({ email, role: 'member' });
      expectError(await ws.owner.patch(`/api/v1/workspaces/current/members/${member.id}`, { email: person.email.toUpperCase() }), 409, 'conflict');
      expectError(await member.client.patch(`/api/v1/workspaces/current/members/${person.id}`, { email: uniqueEmail() }), 403, 'forbidden');
      expectError(await ws.owner.patch(`/api/v1/workspaces/current/members/${member.id}`, {}), 400, 'validation_error');
      expectError(await ws.owner.patch(`/api/v1/workspaces/current/members/${member.id}`, { email: 'nope' }), 400, 'validation_error');
      const bot = await ws.user({ is_agent: true });
      expectError(await ws.owner.patch(`/api/v1/workspaces/current/members/${bot.id}`, { email: uniqueEmail() }), 400, 'validation_error');
      // The same address in another workspace is another person.
      const other = await newWorkspace(s);
      const there = await other.user();
      expectOk(await other.owner.patch(`/api/v1/workspaces/current/members/${there.id}`, { email }));
      // An invite accepted with a taken address is refused, the invite kept.
      const { token } = await invite(ws.owner);
      expectError(await accept({ token, email: email.toUpperCase() }), 409, 'conflict');
      expectOk(await accept({ token }), 201);
    });
  });

  describe('one-time codes', () => {
    it('a sign-in link signs in once, and the key it was made with is not in it', async () => {
      const ws = await newWorkspace(s);
      const link = expectOk(await ws.owner.post('/api/v1/auth/links'), 201).data;
      expect(link.url).to.not.include(ws.ownerKey);
      const url = new URL(link.url);
      expect(url.search).to.equal('');
      const code = url.hash.replace('#code=', '');
      expect(new Date(link.expires_at).getTime() - Date.now()).to.be.within(9 * 60e3, 10 * 60e3 + 5000);
      const body = expectOk(await anon.post('/api/v1/auth/exchange', { code })).data;
      expect(body.user.id).to.equal(ws.ownerId);
      expect(body.api_key.key).to.not.equal(ws.ownerKey);
      expectError(await anon.post('/api/v1/auth/exchange', { code }), 401, 'invalid_credentials');
    });

    it('a code dies when it expires', async () => {
      const ws = await newWorkspace(s);
      const code = new URL(expectOk(await ws.owner.post('/api/v1/auth/links'), 201).data.url).hash.replace('#code=', '');
      await s.rt.db('sign_in_codes').where('user_id', ws.ownerId).update({ expires_at: new Date(Date.now() - 1000) });
      expectError(await anon.post('/api/v1/auth/exchange', { code }), 401, 'invalid_credentials');
      expectError(await anon.post('/api/v1/auth/exchange', { code: 'made-up' }), 401, 'invalid_credentials');
    });

    it('two exchanges of one code racing: one key', async () => {
      const ws = await newWorkspace(s);
      const code = new URL(expectOk(await ws.owner.post('/api/v1/auth/links'), 201).data.url).hash.replace('#code=', '');
      const answers = await Promise.all(Array.from({ length: 5 }, () => anon.post('/api/v1/auth/exchange', { code })));
      expect(answers.map((r) => r.status).sort()).to.deep.equal([200, 401, 401, 401, 401]);
    });

    it('a password-reset link, made by an owner or admin, sets a new password once and ends every web key', async () => {
      const ws = await newWorkspace(s);
      const person = await personByInvite(s, ws);
      const member = await ws.user();
      expectError(await member.client.post(`/api/v1/workspaces/current/members/${person.id}/password-reset`), 403, 'forbidden');
      const link = expectOk(await ws.owner.post(`/api/v1/workspaces/current/members/${person.id}/password-reset`), 201).data;
      const code = new URL(link.url).hash.replace('#reset=', '');
      // A reset code is not a sign-in code.
      expectError(await anon.post('/api/v1/auth/exchange', { code }), 401, 'invalid_credentials');
      const link2 = expectOk(await ws.owner.post(`/api/v1/workspaces/current/members/${person.id}/password-reset`), 201).data;
      const code2 = new URL(link2.url).hash.replace('#reset=', '');
      expectError(await anon.post('/api/v1/auth/reset-password', { code: code2, password: 'short' }), 400, 'validation_error');
      const NEW = 'reset to something long';
      const body = expectOk(await anon.post('/api/v1/auth/reset-password', { code: code2, password: NEW })).data;
      expect(body.user.id).to.equal(person.id);
      expectError(await person.client.get('/api/v1/users/me'), 401, 'unauthorized');
      expectError(await anon.post('/api/v1/auth/reset-password', { code: code2, password: NEW }), 401, 'invalid_credentials');
      expectOk(await signIn(person.email, NEW));
    });
  });

  it('says which ways in are on', async () => {
    expect(expectOk(await anon.get('/api/v1/auth/methods')).data).to.deep.equal({ password: true, oidc: null });
  });

  it("ends a removed member's keys, invites and codes at once", async () => {
    const ws = await newWorkspace(s);
    const admin = await personByInvite(s, ws, { role: 'admin' });
    const made = await invite(admin.client);
    const code = new URL(expectOk(await admin.client.post('/api/v1/auth/links'), 201).data.url).hash.replace('#code=', '');
    expectOk(await ws.owner.delete(`/api/v1/workspaces/current/members/${admin.id}`), 204);
    expectError(await admin.client.get('/api/v1/users/me'), 401, 'unauthorized');
    expectError(await accept({ token: made.token }), 400, 'invite_invalid');
    expectError(await anon.post('/api/v1/auth/exchange', { code }), 401, 'invalid_credentials');
    expectError(await signIn(admin.email, PASSWORD), 401, 'invalid_credentials');
  });
});

describe('sign-in at level 2', () => {
  it('does not exist: the paths are 404, users have no email field, the new fields are unknown', async () => {
    const ws = await newWorkspace();
    const anon = new Client(ws.owner.baseUrl);
    for (const path of ['/api/v1/auth/sign-in', '/api/v1/auth/accept-invite', '/api/v1/auth/exchange', '/api/v1/auth/reset-password', '/api/v1/invites']) {
      expectError(await anon.post(path, {}), 404, 'not_found');
    }
    expectError(await ws.owner.post('/api/v1/auth/links'), 404, 'not_found');
    const member = await ws.user();
    expect(Object.keys(expectOk(await ws.owner.get(`/api/v1/users/${member.id}`)).data)).to.deep.equal(['id', 'name', 'display_name', 'avatar_url', 'role', 'is_agent', 'created_at']);
    expectError(await member.client.patch('/api/v1/users/me', { password: PASSWORD }), 400, 'validation_error');
    expectError(await ws.owner.patch(`/api/v1/workspaces/current/members/${member.id}`, { email: uniqueEmail() }), 400, 'validation_error');
    expectError(await ws.owner.patch(`/api/v1/workspaces/current/members/${member.id}`, {}), 400, 'validation_error');
  });
});
