// The access cache (shared/access-cache.ts) without I/O; across replicas: test/processes/access-cache.test.ts.
import { expect } from 'chai';
import { AccessCache } from '../../shared/access-cache.js';
import type { Actor } from '../../shared/auth.js';

const actor: Actor = { keyId: 'k1', userId: 'u1', workspaceId: 'w1', role: 'admin', isAgent: false, scopes: null, conversationIds: null };

/** A cache whose invalidation stream was just heard from (services/stack.ts tells it after every read). */
const fresh = (o: ConstructorParameters<typeof AccessCache>[1] = {}) => {
  const cache = new AccessCache(true, o);
  cache.heard();
  return cache;
};

describe('AccessCache', () => {
  it('drops a caller when its key is revoked, its role changes or it is removed', () => {
    const cache = fresh();
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
    const cache = fresh();
    cache.setAccess(cache.mark(), 'c1', 'u1', { channel: { id: 'c1' }, isMember: false });
    cache.onEvent({ type: 'channel.member_added', data: { channel_id: 'c1', user_id: 'u1' } });
    expect(cache.getAccess('c1', 'u1')).to.equal(undefined);
  });

  it('does not cache an answer read while an invalidation happened', () => {
    const cache = fresh();
    const mark = cache.mark();
    cache.onEvent({ type: 'api_key.revoked', data: { key_id: 'k1' } }); // committed while the read was in flight
    cache.setActor(mark, 'hash', actor, null);
    expect(cache.getActor('hash')).to.equal(undefined);
  });

  it('never keeps a caller past its key’s expiry', () => {
    const cache = fresh();
    cache.setActor(cache.mark(), 'hash', actor, new Date(Date.now() - 1));
    expect(cache.getActor('hash')).to.equal(undefined);
  });

  it('caches nothing when disabled', () => {
    const cache = new AccessCache(false);
    cache.setActor(cache.mark(), 'hash', actor, null);
    expect(cache.getActor('hash')).to.equal(undefined);
  });

  describe('while its invalidation stream is silent (issue 33)', () => {
    const clock = () => {
      const c = { t: 1_000_000, now: () => c.t };
      return c;
    };

    it('serves nothing before the stream was first heard from', () => {
      const cache = new AccessCache(true);
      cache.setActor(cache.mark(), 'hash', actor, null);
      expect(cache.getActor('hash')).to.equal(undefined);
    });

    it('serves nothing once the stream has been silent for the bound, whatever the kind of entry', () => {
      const c = clock();
      const cache = fresh({ staleAfterMs: 2_000, now: c.now });
      cache.setActor(cache.mark(), 'hash', actor, null);
      cache.setAccess(cache.mark(), 'c1', 'u1', { channel: { id: 'c1' }, isMember: true });
      cache.setHook(cache.mark(), 'h1', { id: 'h1' });
      c.t += 1_999;
      expect(cache.getActor('hash')).to.deep.equal(actor);
      expect(cache.getAccess('c1', 'u1')).to.not.equal(undefined);
      expect(cache.getHook('h1')).to.not.equal(undefined);
      c.t += 1;
      expect(cache.getActor('hash')).to.equal(undefined);
      expect(cache.getAccess('c1', 'u1')).to.equal(undefined);
      expect(cache.getHook('h1')).to.equal(undefined);
    });

    it('keeps serving while the stream answers, and drops everything cached before a silence when it answers again', () => {
      const c = clock();
      const cache = fresh({ staleAfterMs: 2_000, now: c.now });
      cache.setActor(cache.mark(), 'hash', actor, null);
      for (let i = 0; i < 10; i++) {
        c.t += 1_000;
        cache.heard();
      }
      expect(cache.getActor('hash'), 'heard every second: still served').to.deep.equal(actor);
      const mark = cache.mark(); // a database read in flight across the silence
      c.t += 5_000;
      cache.heard();
      expect(cache.getActor('hash'), 'cached before the silence').to.equal(undefined);
      cache.setActor(mark, 'hash', actor, null);
      expect(cache.getActor('hash'), 'read before the silence, written after').to.equal(undefined);
      cache.setActor(cache.mark(), 'hash', actor, null);
      expect(cache.getActor('hash'), 'read after').to.deep.equal(actor);
    });
  });
});
