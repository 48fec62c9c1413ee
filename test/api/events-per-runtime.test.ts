// Commit listeners belong to a runtime (shared/events.ts, CommitListeners): two
// stacks in one process each hear only their own commits, so neither relay
// is woken for (nor its access cache told of) the other's commits.
import { expect } from 'chai';
import type { AxidEvent } from '../../shared/events.js';
import { createChannel, postMessage } from '../support/conversations.js';
import { uploadFile } from '../support/files.js';
import { separateStack } from '../support/separate-stack.js';
import { newWorkspace, stack } from '../support/stack.js';

describe('commits are heard per runtime', () => {
  it('reach the listeners of the runtime that committed them, never another stack in the same process', async () => {
    const other = await separateStack();
    const heardHere: AxidEvent[] = [];
    const heardThere: AxidEvent[] = [];
    const stopHere = stack().rt.events.subscribe((events) => void heardHere.push(...events));
    const stopThere = other.stack.rt.events.subscribe((events) => void heardThere.push(...events));
    try {
      const ws = await newWorkspace();
      const channel = await createChannel(ws.owner);
      const message = await postMessage(ws.owner, channel.id, { content: 'only here' });
      const mine = (events: AxidEvent[]) => events.filter((e) => e.type === 'message.created' && (e.data.message as { id: string }).id === message.id);
      expect(mine(heardHere)).to.have.length(1);
      expect(mine(heardThere)).to.have.length(0);
      expect(heardThere.filter((e) => e.to.workspace_id === ws.workspaceId)).to.have.length(0);
    } finally {
      stopHere();
      stopThere();
      await other.stop();
    }
  });

  it('wake the job publisher of the runtime that recorded the job, never another stack’s', async () => {
    const other = await separateStack();
    let here = 0;
    let there = 0;
    const stopHere = stack().rt.jobs.subscribe(() => here++);
    const stopThere = other.stack.rt.jobs.subscribe(() => there++);
    try {
      const ws = await newWorkspace();
      const up = await uploadFile(stack().url, { key: ws.ownerKey, data: Buffer.from('one job\n'), name: 'job.txt', type: 'text/plain' });
      expect(up.status).to.equal(201);
      expect(here).to.be.greaterThan(0);
      expect(there).to.equal(0);
    } finally {
      stopHere();
      stopThere();
      await other.stop();
    }
  });
});
