// CommitListeners (shared/events.ts): the work a commit's listeners start (the
// page cache's invalidations) is what a writing request waits for before it
// answers (shared/http/route.ts), bounded, and a listener's failure never
// reaches the writer.
import { expect } from 'chai';
import { CommitListeners, type AxidEvent } from '../../shared/events.js';

const event: AxidEvent = { type: 'message.created', to: { scope: 'channel', workspace_id: 'w', channel_id: 'c' }, data: {} };

describe('CommitListeners.settled', () => {
  it("resolves only once every listener's work of the commits so far is done", async () => {
    const listeners = new CommitListeners();
    const release: (() => void)[] = [];
    listeners.subscribe(() => new Promise<void>((resolve) => release.push(resolve)));
    listeners.subscribe(() => undefined); // a listener with no work to wait for
    listeners.committed([event]);
    listeners.committed([event]);
    let settled = false;
    const waiting = listeners.settled().then(() => (settled = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).to.equal(false);
    release[0]!();
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled, 'the second commit is still being worked on').to.equal(false);
    release[1]!();
    await waiting;
    expect(settled).to.equal(true);
    // Nothing pending: at once.
    await listeners.settled();
  });

  it('is not failed by a listener whose work fails', async () => {
    const listeners = new CommitListeners();
    listeners.subscribe(() => Promise.reject(new Error('redis away')));
    listeners.committed([event]);
    await listeners.settled();
  });
});
