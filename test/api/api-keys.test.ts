import { expect } from 'chai';
import { expectError, expectOk } from '../support/expect.js';
import { newWorkspace, stack } from '../support/stack.js';
import { Client } from '../support/client.js';

describe('/api-keys', () => {
  it('creates a key (201) whose secret is in that response only, and lists it without the secret', async () => {
    const ws = await newWorkspace();
    const created = expectOk(await ws.owner.post('/api/v1/api-keys', { name: 'ci key' }), 201);
    expect(created.data).to.have.all.keys('id', 'name', 'prefix', 'created_at', 'expires_at', 'key');
    expect(created.data.key.startsWith(created.data.prefix)).to.equal(true);
    expectOk(await new Client(stack().url, created.data.key).get('/api/v1/users/me'));
    const listed = expectOk(await ws.owner.get('/api/v1/api-keys'));
    const entry = listed.data.find((k: { id: string }) => k.id === created.data.id);
    expect(entry).to.have.all.keys('id', 'name', 'prefix', 'created_at', 'expires_at');
    expect(JSON.stringify(listed)).not.to.include(created.data.key);
  });

  it('stores keys hashed', async () => {
    const ws = await newWorkspace();
    const created = expectOk(await ws.owner.post('/api/v1/api-keys', { name: 'k' }), 201);
    const row = await stack().rt.db('api_keys').where({ id: created.data.id }).first();
    expect(JSON.stringify(row)).not.to.include(created.data.key);
  });

  it('lists only the caller’s keys', async () => {
    const ws = await newWorkspace();
    const member = await ws.user();
    const mine = expectOk(await member.client.get('/api/v1/api-keys')).data;
    expect(mine).to.have.length(1);
    const owners = expectOk(await ws.owner.get('/api/v1/api-keys')).data;
    expect(owners.map((k: { id: string }) => k.id)).not.to.include(mine[0].id);
  });

  it('answers 401 key_expired for an expired key and 401 unauthorized for a revoked one', async () => {
    const ws = await newWorkspace();
    const expiring = expectOk(await ws.owner.post('/api/v1/api-keys', { name: 'short', expires_at: new Date(Date.now() + 60_000).toISOString() }), 201);
    // Move its expiry into the past rather than waiting for it (before its first
    // use: a key in use is cached until its own expires_at, which this bypasses).
    await stack().rt.db('api_keys').where({ id: expiring.data.id }).update({ expires_at: new Date(Date.now() - 1000) });
    const client = new Client(stack().url, expiring.data.key);
    expectError(await client.get('/api/v1/users/me'), 401, 'key_expired');

    const revocable = expectOk(await ws.owner.post('/api/v1/api-keys', { name: 'gone' }), 201);
    expect((await ws.owner.delete(`/api/v1/api-keys/${revocable.data.id}`)).status).to.equal(204);
    expectError(await new Client(stack().url, revocable.data.key).get('/api/v1/users/me'), 401, 'unauthorized');
    expectError(await ws.owner.delete(`/api/v1/api-keys/${revocable.data.id}`), 404, 'not_found');
  });

  it('answers 401 unauthorized for a missing, malformed or unknown key', async () => {
    const anon = new Client(stack().url);
    expectError(await anon.get('/api/v1/users/me'), 401, 'unauthorized');
    expectError(await anon.get('/api/v1/users/me', { authorization: 'Basic abc' }), 401, 'unauthorized');
    expectError(await anon.get('/api/v1/users/me', { authorization: 'Bearer axid_unknown' }), 401, 'unauthorized');
    expectError(await anon.get('/api/v1/users/me', { authorization: 'Bearer' }), 401, 'unauthorized');
  });

  it('refuses revoking someone else’s key with 404 not_found', async () => {
    const ws = await newWorkspace();
    const member = await ws.user();
    const ownerKeys = expectOk(await ws.owner.get('/api/v1/api-keys')).data;
    expectError(await member.client.delete(`/api/v1/api-keys/${ownerKeys[0].id}`), 404, 'not_found');
    expectError(await member.client.delete('/api/v1/api-keys/not-an-id'), 404, 'not_found');
    expectOk(await ws.owner.get('/api/v1/users/me'));
  });

  for (const [label, body] of [
    ['no name', {}],
    ['an expiry in the past', { name: 'k', expires_at: '2020-01-01T00:00:00Z' }],
    ['an expiry that is not ISO 8601', { name: 'k', expires_at: 'tomorrow' }],
  ] as const) {
    it(`answers 400 validation_error for ${label}`, async () => {
      const ws = await newWorkspace();
      const before = expectOk(await ws.owner.get('/api/v1/api-keys')).data.length;
      expectError(await ws.owner.post('/api/v1/api-keys', body), 400, 'validation_error');
      expect(expectOk(await ws.owner.get('/api/v1/api-keys')).data.length).to.equal(before);
    });
  }
});
