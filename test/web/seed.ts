// What the browser tests set up through the API before a person opens the
// app: a channel with its members, a message by the owner.
import { expect } from 'chai';
import { uniqueName, type TestWorkspace } from '../support/stack.js';

/** A channel made by the workspace's owner (201), with these members added. */
export async function channelWith(ws: TestWorkspace, members: string[] = [], body: Record<string, unknown> = {}) {
  const res = await ws.owner.post('/api/v1/channels', { name: uniqueName('ch'), ...body });
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  for (const id of members) expect((await ws.owner.post(`/api/v1/channels/${res.body.data.id}/members`, { user_id: id })).status).to.equal(201);
  return res.body.data as { id: string; name: string };
}

/** A message the owner posts in a channel (201). */
export async function post(ws: TestWorkspace, channelId: string, content: string) {
  const res = await ws.owner.post(`/api/v1/channels/${channelId}/messages`, { content });
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return res.body.data as { id: string };
}
