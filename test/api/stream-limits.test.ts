import { expect } from 'chai';
import { waitFor } from '../support/files.js';
import { separateStack } from '../support/separate-stack.js';
import { openRaw, type RawStream } from '../support/sse.js';
import { newWorkspace } from '../support/stack.js';

describe('GET /api/v1/stream: open streams per user (STREAM_MAX_PER_USER)', function () {
  this.timeout(60_000);
  let s: Awaited<ReturnType<typeof separateStack>>;
  const open: RawStream[] = [];
  before(async () => {
    s = await separateStack({ STREAM_MAX_PER_USER: '2' });
  });
  after(async () => {
    for (const st of open) st.close();
    await s?.stop();
  });

  it('answers 429 too_many_streams past the cap, counts each user apart, and frees a slot when a stream closes', async () => {
    const ws = await newWorkspace(s.stack);
    const other = await ws.user();
    for (let i = 0; i < 2; i++) {
      const st = await openRaw(s.stack.url, ws.ownerKey);
      open.push(st);
      expect(st.status).to.equal(200);
    }
    const refused = await openRaw(s.stack.url, ws.ownerKey);
    expect(refused.status).to.equal(429);
    expect(refused.body.error.code).to.equal('too_many_streams');
    expect(refused.body.error.message).to.match(/STREAM_MAX_PER_USER/);

    const theirs = await openRaw(s.stack.url, other.key);
    open.push(theirs);
    expect(theirs.status, 'another user is not affected').to.equal(200);

    open[0]!.close();
    const again = await waitFor(async () => {
      const st = await openRaw(s.stack.url, ws.ownerKey);
      if (st.status === 200) return st;
      st.close();
      return undefined;
    }, 'a freed stream slot');
    open.push(again);
    expect((await openRaw(s.stack.url, ws.ownerKey)).status, 'the cap still holds').to.equal(429);
  });
});
