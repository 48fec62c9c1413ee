import { expect } from 'chai';
import { expectError, expectOk } from '../support/expect.js';
import { createChannel, waitForEvents } from '../support/conversations.js';
import { newWorkspace } from '../support/stack.js';

describe('POST /channels/:id/typing', () => {
  it('answers 204 and emits an ephemeral typing event to the channel', async () => {
    const ws = await newWorkspace();
    const c = await createChannel(ws.owner);
    const res = await ws.owner.post(`/api/v1/channels/${c.id}/typing`);
    expectOk(res, 204);
    expect(res.text).to.equal('');
    const [e] = await waitForEvents((x) => x.type === 'typing' && x.data.channel_id === c.id);
    expect(e!.data).to.deep.equal({ channel_id: c.id, user_id: ws.ownerId });
    expect(e!.to).to.deep.equal({ scope: 'channel', workspace_id: ws.workspaceId, channel_id: c.id });
  });

  it('is for members: 403 forbidden for a non-member of a public channel, 404 for a hidden one', async () => {
    const ws = await newWorkspace();
    const u = await ws.user();
    const pub = await createChannel(ws.owner);
    const priv = await createChannel(ws.owner, { is_private: true });
    expectError(await u.client.post(`/api/v1/channels/${pub.id}/typing`), 403, 'forbidden');
    expectError(await u.client.post(`/api/v1/channels/${priv.id}/typing`), 404, 'not_found');
  });
});
