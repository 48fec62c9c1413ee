import { expect } from 'chai';
import { expectError, expectOk } from '../support/expect.js';
import { newWorkspace, stack, uniqueName } from '../support/stack.js';
import { Client } from '../support/client.js';

const USER_FIELDS = ['id', 'name', 'display_name', 'avatar_url', 'role', 'is_agent', 'created_at'];

describe('POST /users and POST /agents', () => {
  it('creates a human member with its first API key, shown once', async () => {
    const ws = await newWorkspace();
    const name = uniqueName('Ada Lovelace');
    const body = expectOk(await ws.owner.post('/api/v1/users', { name, display_name: 'Ada', avatar_url: 'https://example.com/a.png' }), 201);
    expect(body.data).to.include.keys(...USER_FIELDS, 'api_key');
    expect(body.data).to.include({ name, display_name: 'Ada', role: 'member', is_agent: false });
    const me = expectOk(await new Client(stack().url, body.data.api_key).get('/api/v1/users/me'));
    expect(me.data.id).to.equal(body.data.id);
    expect(me.data).not.to.have.property('api_key');
    const listed = expectOk(await ws.owner.get(`/api/v1/users/${body.data.id}`));
    expect(listed.data).to.have.all.keys(...USER_FIELDS);
  });

  it('keeps names exactly as given', async () => {
    const ws = await newWorkspace();
    const name = `  Émile Zola ${uniqueName('x')} `;
    const body = expectOk(await ws.owner.post('/api/v1/users', { name }), 201);
    expect(body.data.name).to.equal(name);
  });

  it('creates an agent through POST /agents with is_agent true and a key', async () => {
    const ws = await newWorkspace();
    const body = expectOk(await ws.owner.post('/api/v1/agents', { name: uniqueName('deploy-bot') }), 201);
    expect(body.data.is_agent).to.equal(true);
    expect(body.data.api_key).to.match(/^axid_/);
    const me = expectOk(await new Client(stack().url, body.data.api_key).get('/api/v1/users/me'));
    expect(me.data.is_agent).to.equal(true);
  });

  it('lets an admin create users, and sets the role asked for', async () => {
    const ws = await newWorkspace();
    const admin = await ws.user({ role: 'admin' });
    const body = expectOk(await admin.client.post('/api/v1/users', { name: uniqueName('u'), role: 'admin' }), 201);
    expect(body.data.role).to.equal('admin');
  });

  it('refuses an admin creating an owner with 403 forbidden', async () => {
    const ws = await newWorkspace();
    const admin = await ws.user({ role: 'admin' });
    expectError(await admin.client.post('/api/v1/users', { name: uniqueName('u'), role: 'owner' }), 403, 'forbidden');
  });

  it('refuses members with 403 forbidden and creates nothing', async () => {
    const ws = await newWorkspace();
    const member = await ws.user();
    const before = (await ws.owner.get('/api/v1/users?limit=200')).body.data.length;
    expectError(await member.client.post('/api/v1/users', { name: uniqueName('u') }), 403, 'forbidden');
    expectError(await member.client.post('/api/v1/agents', { name: uniqueName('b') }), 403, 'forbidden');
    expect((await ws.owner.get('/api/v1/users?limit=200')).body.data.length).to.equal(before);
  });

  it('refuses agents creating users or agents even as admins (403 forbidden)', async () => {
    const ws = await newWorkspace();
    const bot = await ws.user({ is_agent: true, role: 'admin' });
    expectError(await bot.client.post('/api/v1/agents', { name: uniqueName('b') }), 403, 'forbidden');
    expectError(await bot.client.post('/api/v1/users', { name: uniqueName('u') }), 403, 'forbidden');
  });

  it('answers 409 name_taken for a name already used in the workspace', async () => {
    const ws = await newWorkspace();
    const name = uniqueName('dup');
    expectOk(await ws.owner.post('/api/v1/users', { name }), 201);
    expectError(await ws.owner.post('/api/v1/users', { name }), 409, 'name_taken');
    // another workspace may use it
    const other = await newWorkspace();
    expectOk(await other.owner.post('/api/v1/users', { name }), 201);
  });

  for (const [label, body] of [
    ['no name', {}],
    ['an empty name', { name: '' }],
    ['a blank name', { name: '   ' }],
    ['a name over 80 characters', { name: 'n'.repeat(81) }],
    ['a name that is a number', { name: 42 }],
    ['an unknown role', { name: 'x', role: 'superuser' }],
    ['is_agent as a string', { name: 'x', is_agent: 'yes' }],
    ['an avatar that is not a URL', { name: 'x', avatar_url: 'javascript:alert(1)' }],
    ['an unknown field', { name: 'x', nickname: 'y' }],
  ] as const) {
    it(`answers 400 validation_error naming the field for ${label}`, async () => {
      const ws = await newWorkspace();
      const res = await ws.owner.post('/api/v1/users', body);
      expectError(res, 400, 'validation_error');
    });
  }

  it('names the field at fault in the message', async () => {
    const ws = await newWorkspace();
    const res = await ws.owner.post('/api/v1/users', { name: 'x', role: 'superuser' });
    expect(res.body.error.message).to.match(/^role: /);
    const missing = await ws.owner.post('/api/v1/users', {});
    expect(missing.body.error.message).to.equal('name: is required');
  });

  describe('settings.max_users', () => {
    it('answers 403 user_limit_reached past the cap, and agents never count', async () => {
      const ws = await newWorkspace();
      expectOk(await ws.owner.patch('/api/v1/workspaces/current', { settings: { max_users: 2 } }));
      expectOk(await ws.owner.post('/api/v1/users', { name: uniqueName('second') }), 201);
      expectError(await ws.owner.post('/api/v1/users', { name: uniqueName('third') }), 403, 'user_limit_reached');
      expectOk(await ws.owner.post('/api/v1/agents', { name: uniqueName('bot') }), 201);
      expectOk(await ws.owner.post('/api/v1/users', { name: uniqueName('bot2'), is_agent: true }), 201);
      expectOk(await ws.owner.patch('/api/v1/workspaces/current', { settings: { max_users: null } }));
      expectOk(await ws.owner.post('/api/v1/users', { name: uniqueName('third') }), 201);
    });
  });
});

describe('GET /users, /agents and /users/{id}', () => {
  it('filters agents with is_agent=true and lists the same on /agents', async () => {
    const ws = await newWorkspace();
    const bot = await ws.user({ is_agent: true });
    await ws.user();
    const agents = expectOk(await ws.owner.get('/api/v1/users?is_agent=true'));
    expect(agents.data.map((u: { id: string }) => u.id)).to.deep.equal([bot.id]);
    const humans = expectOk(await ws.owner.get('/api/v1/users?is_agent=false'));
    expect(humans.data.every((u: { is_agent: boolean }) => !u.is_agent)).to.equal(true);
    expect(humans.data).to.have.length(2);
    const viaAgents = expectOk(await ws.owner.get('/api/v1/agents'));
    expect(viaAgents.data).to.deep.equal(agents.data);
  });

  it('walks every member exactly once with a keyset cursor', async () => {
    const ws = await newWorkspace();
    for (let i = 0; i < 6; i++) await ws.user({ is_agent: i % 2 === 0 });
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: { body: { data: { id: string }[]; pagination: { next_cursor: string | null; has_more: boolean } } } = await ws.owner.get(
        `/api/v1/users?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      seen.push(...res.body.data.map((u) => u.id));
      expect(res.body.pagination.has_more).to.equal(res.body.pagination.next_cursor !== null);
      cursor = res.body.pagination.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).to.equal(4);
    expect(seen).to.have.length(7);
    expect(new Set(seen).size).to.equal(7);
  });

  for (const query of ['limit=0', 'limit=201', 'limit=abc', 'cursor=not-a-cursor', 'is_agent=maybe']) {
    it(`answers 400 validation_error for ${query}`, async () => {
      const ws = await newWorkspace();
      expectError(await ws.owner.get(`/api/v1/users?${query}`), 400, 'validation_error');
    });
  }

  it('answers 404 not_found for a user of another workspace, an unknown id and a malformed id', async () => {
    const ws = await newWorkspace();
    const other = await newWorkspace();
    expectError(await ws.owner.get(`/api/v1/users/${other.ownerId}`), 404, 'not_found');
    expectError(await ws.owner.get('/api/v1/users/6f0c1f43-4a1e-4d47-9d52-2a0bde4c2b11'), 404, 'not_found');
    expectError(await ws.owner.get('/api/v1/users/nope'), 404, 'not_found');
  });
});

describe('PATCH /users/me', () => {
  it('updates name, display name and avatar', async () => {
    const ws = await newWorkspace();
    const member = await ws.user();
    const name = uniqueName('renamed');
    const body = expectOk(await member.client.patch('/api/v1/users/me', { name, display_name: 'R', avatar_url: null }));
    expect(body.data).to.include({ name, display_name: 'R', avatar_url: null });
    expect(expectOk(await member.client.get('/api/v1/users/me')).data.name).to.equal(name);
  });

  it('refuses changing its own role through /users/me', async () => {
    const ws = await newWorkspace();
    const member = await ws.user();
    expectError(await member.client.patch('/api/v1/users/me', { role: 'owner' }), 400, 'validation_error');
    expect(expectOk(await member.client.get('/api/v1/users/me')).data.role).to.equal('member');
  });
});
