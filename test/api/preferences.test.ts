// A person's preferences (level 3, docs/web.md): muted conversations and the
// theme, kept on the server so they follow the person across devices; each
// person reads and changes only their own; absent at level 2.
import { expect } from 'chai';
import { expectError, expectOk } from '../support/expect.js';
import { level3Stack, newWorkspace, stack } from '../support/stack.js';

const UUID_A = '00000000-0000-4000-8000-00000000000a';
const UUID_B = '00000000-0000-4000-8000-00000000000b';

describe('GET and PATCH /api/v1/users/me/preferences (level 3)', () => {
  it('starts from the defaults, keeps a change for every key of the person, and only theirs', async () => {
    const ws = await newWorkspace(await level3Stack());
    const bob = await ws.user();
    expect(expectOk(await ws.owner.get('/api/v1/users/me/preferences')).data).to.deep.equal({ muted_conversation_ids: [], theme: 'system', updated_at: null });
    const changed = expectOk(await ws.owner.patch('/api/v1/users/me/preferences', { muted_conversation_ids: [UUID_A, UUID_B, UUID_A], theme: 'dark' })).data;
    expect(changed).to.include({ theme: 'dark' });
    expect(changed.muted_conversation_ids).to.deep.equal([UUID_A, UUID_B]);
    expect(changed.updated_at).to.be.a('string');
    // Another device of the same person (another key) sees it; a field left out is kept.
    const otherKey = expectOk(await ws.owner.post('/api/v1/api-keys', { name: 'second device' }), 201).data.key as string;
    const second = ws.owner.withKey(otherKey);
    expectOk(await second.patch('/api/v1/users/me/preferences', { muted_conversation_ids: [UUID_B] }));
    expect(expectOk(await ws.owner.get('/api/v1/users/me/preferences')).data).to.include({ theme: 'dark' }).and.to.deep.include({ muted_conversation_ids: [UUID_B] });
    // Bob has his own.
    expect(expectOk(await bob.client.get('/api/v1/users/me/preferences')).data.muted_conversation_ids).to.deep.equal([]);
  });

  it('refuses what is not a preference: unknown fields, a bad theme, ids that are not uuids, too many', async () => {
    const ws = await newWorkspace(await level3Stack());
    for (const body of [{ colour: 'red' }, { theme: 'blue' }, { muted_conversation_ids: ['general'] }, { muted_conversation_ids: 'x' }, { muted_conversation_ids: Array.from({ length: 1001 }, () => UUID_A) }]) {
      expectError(await ws.owner.patch('/api/v1/users/me/preferences', body), 400, 'validation_error');
    }
    expect(expectOk(await ws.owner.get('/api/v1/users/me/preferences')).data.updated_at).to.equal(null);
    expectError(await ws.owner.withKey(undefined).get('/api/v1/users/me/preferences'), 401, 'unauthorized');
  });

  it('does not exist at level 2', async () => {
    const ws = await newWorkspace(stack());
    expect((await ws.owner.get('/api/v1/users/me/preferences')).status).to.equal(404);
  });
});
