// A hook's posts carry its name (level 3, docs/webhooks.md): clients show the
// hook, not the person who made it. Level 2 leaves `display` as sent.
import { expect } from 'chai';
import { Client } from '../support/client.js';
import { expectOk } from '../support/expect.js';
import { level3Stack, newWorkspace, stack, uniqueName } from '../support/stack.js';
import type { Stack } from '../../services/stack.js';

async function hookIn(s: Stack) {
  const ws = await newWorkspace(s);
  const channel = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('hooks') }), 201).data as { id: string };
  const hook = expectOk(await ws.owner.post('/api/v1/webhooks/incoming', { channel_id: channel.id, name: 'Deploys' }), 201).data as { id: string };
  return { ws, channel, hook, anonymous: new Client(s.url) };
}

describe('a hook signs its posts with its name', function () {
  this.timeout(30_000);

  it('level 2: a native post shows display null, as before', async () => {
    const { hook, anonymous } = await hookIn(stack());
    const message = expectOk(await anonymous.post(`/hooks/${hook.id}`, { content: 'deployed' }), 201).data;
    expect(message.display).to.equal(null);
    expect(message.webhook_id).to.equal(hook.id);
  });

  it("level 3: a native post carries the hook's name, in the answer and in history; a compatible post's own username wins, its icon is kept", async () => {
    const s = await level3Stack();
    const { ws, channel, hook, anonymous } = await hookIn(s);
    const native = expectOk(await anonymous.post(`/hooks/${hook.id}`, { content: 'deployed' }), 201).data;
    expect(native.display).to.deep.equal({ username: 'Deploys' });
    expect((await anonymous.post(`/hooks/compat/${hook.id}`, { text: 'named', username: 'Release train', icon_emoji: ':rocket:' })).status).to.equal(200);
    expect((await anonymous.post(`/hooks/compat/${hook.id}`, { text: 'icon only', icon_emoji: ':rocket:' })).status).to.equal(200);
    const history = expectOk(await ws.owner.get(`/api/v1/channels/${channel.id}/messages`), 200).data as { content: string; display: unknown }[];
    const byContent = Object.fromEntries(history.map((m) => [m.content, m.display]));
    expect(byContent).to.deep.include({
      deployed: { username: 'Deploys' },
      named: { username: 'Release train', icon_emoji: ':rocket:' },
      'icon only': { username: 'Deploys', icon_emoji: ':rocket:' },
    });
  });
});
