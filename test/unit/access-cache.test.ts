// The access cache (shared/access-cache.ts) without I/O; across replicas: test/processes/access-cache.test.ts.
import { expect } from 'chai';
import { AccessCache } from '../../shared/access-cache.js';
import type { Actor } from '../../shared/auth.js';

const actor: Actor = { keyId: 'k1', userId: 'u1', workspaceId: 'w1', role: 'admin', isAgent: false };

describe('AccessCache', () => {
  it('drops a caller when its key is revoked, its role changes or it is removed', () => {
    const cache = new AccessCache(true);
    for (const event of [
      { type: 'api_key.revoked' as const, data: { key_id: 'k1' } },
      { type: 'member.updated' as const, data: { user: { id: 'u1' } } },
      { type: 'member.removed' as const, data: { user_id: 'u1' } },
    ]) {
      cache.setActor(cache.mark(), 'hash', actor, null);
      expect(cache.getActor('hash')).to.deep.equal(actor);
      cache.onEvent(event);
      expect(cache.getActor('hash'), event.type).to.equal(undefined);
    }
  });

  it('drops channel access when membership changes', () => {
    const cache = new AccessCache(true);
    cache.setAccess(cache.mark(), 'c1', 'u1', { channel: { id: 'c1' }, isMember: false });
    cache.onEvent({ type: 'channel.member_added', data: { channel_id: 'c1', user_id: 'u1' } });
    expect(cache.getAccess('c1', 'u1')).to.equal(undefined);
  });

  it('does not cache an answer read while an invalidation happened', () => {
    const cache = new AccessCache(true);
    const mark = cache.mark();
    cache.onEvent({ type: 'api_key.revoked', data: { key_id: 'k1' } }); // committed while the read was in flight
    cache.setActor(mark, 'hash', actor, null);
    expect(cache.getActor('hash')).to.equal(undefined);
  });

  it('never keeps a caller past its key’s expiry', () => {
    const cache = new AccessCache(true);
    cache.setActor(cache.mark(), 'hash', actor, new Date(Date.now() - 1));
    expect(cache.getActor('hash')).to.equal(undefined);
  });

  it('caches nothing when disabled', () => {
    const cache = new AccessCache(false);
    cache.setActor(cache.mark(), 'hash', actor, null);
    expect(cache.getActor('hash')).to.equal(undefined);
  });
});
