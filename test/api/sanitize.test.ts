import { expect } from 'chai';
import { expectError, expectOk } from '../support/expect.js';
import { createChannel, messagesUrl, postMessage } from '../support/conversations.js';
import { newWorkspace } from '../support/stack.js';

describe('content sanitizing through the API', () => {
  it('stores sanitized content on post and on edit', async () => {
    const ws = await newWorkspace();
    const c = await createChannel(ws.owner);
    const m = await postMessage(ws.owner, c.id, 'hi <img src=x onerror=alert(1)><script>steal()</script>');
    expect(m.content).not.to.match(/onerror|script/);
    expect(expectOk(await ws.owner.get(`${messagesUrl(c.id)}/${m.id}`)).data.content).to.equal(m.content);
    const md = await postMessage(ws.owner, c.id, 'a < b && c > d **bold**');
    expect(md.content).to.equal('a < b && c > d **bold**');
    const edited = expectOk(await ws.owner.patch(`${messagesUrl(c.id)}/${md.id}`, { content: '<a href="javascript:x()">y</a>' })).data;
    expect(edited.content).not.to.match(/javascript/);
  });

  it('answers 400 validation_error when nothing is left after sanitizing', async () => {
    const ws = await newWorkspace();
    const c = await createChannel(ws.owner);
    const res = await ws.owner.post(messagesUrl(c.id), { content: '<script>alert(1)</script>' });
    expectError(res, 400, 'validation_error');
    expect(res.body.error.message).to.match(/^content/);
  });
});
