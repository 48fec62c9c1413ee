// The stream reader (shared/stream-reader.ts) on the shared Redis: a batch's
// entries reach the listener in order, in turns, with the process's other work
// run between them (a gateway's streams opening waited behind whole batches).
import { expect } from 'chai';
import { StreamReader } from '../../shared/stream-reader.js';
import { stack } from '../support/stack.js';

describe('stream reader', () => {
  it('dispatches a long batch in turns, letting other work run between them, and in order', async () => {
    const { rt } = stack();
    const key = `${rt.config.redisKeyPrefix}reader-turns`;
    const total = 40;
    const pipeline = rt.redis.pipeline();
    for (let i = 0; i < total; i++) pipeline.xadd(key, '*', 'e', JSON.stringify({ type: 'user.updated', to: { scope: 'workspace', workspace_id: 'w' }, data: { i } }));
    await pipeline.exec();

    const seen: number[] = [];
    /** How many entries had been dispatched when work queued by the first one ran. */
    let dispatchedWhenOtherWorkRan = -1;
    let done!: () => void;
    const all = new Promise<void>((resolve) => (done = resolve));
    // Each entry keeps the listener busy 5 ms: the batch is longer than one turn.
    const reader = new StreamReader({
      redisUrl: rt.config.redisUrl,
      streamKeys: [key],
      startAfter: ['0-0'],
      log: rt.log,
      blockMs: 1_000,
      onEvent(event) {
        if (seen.length === 0) setImmediate(() => (dispatchedWhenOtherWorkRan = seen.length));
        seen.push((event.data as { i: number }).i);
        const until = performance.now() + 5;
        while (performance.now() < until);
        if (seen.length === total) done();
      },
    });
    reader.start();
    try {
      await all;
      expect(seen).to.deep.equal(Array.from({ length: total }, (_, i) => i));
      expect(dispatchedWhenOtherWorkRan, 'other work ran before the batch ended').to.be.within(1, total - 1);
    } finally {
      await reader.stop();
      await rt.redis.del(key);
    }
  });
});
