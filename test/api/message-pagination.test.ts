import { expect } from 'chai';
import { driverQueries } from '../support/queries.js';
import { expectOk } from '../support/expect.js';
import { createChannel, messagesUrl, postMessage } from '../support/conversations.js';
import { newWorkspace, stack } from '../support/stack.js';

describe('GET /channels/:id/messages pagination', () => {
  it('walks newest to oldest over several pages, each message exactly once, while others are posted', async () => {
    const ws = await newWorkspace();
    const c = await createChannel(ws.owner);
    const posted: string[] = [];
    for (let i = 0; i < 23; i++) posted.push((await postMessage(ws.owner, c.id, `m${i}`)).id);
    const seen: string[] = [];
    const concurrent: Promise<unknown>[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = cursor ? `&cursor=${cursor}` : '';
      const body = expectOk(await ws.owner.get(`${messagesUrl(c.id)}?limit=5${q}`));
      pages++;
      expect(body.data.length).to.be.at.most(5);
      seen.push(...body.data.map((m: { id: string }) => m.id));
      cursor = body.pagination.next_cursor;
      expect(body.pagination.has_more).to.equal(cursor !== null);
      // New messages arrive between pages; they are newer than the walk and never show up in it.
      concurrent.push(postMessage(ws.owner, c.id, `new after page ${pages}`), postMessage(ws.owner, c.id, 'and another'));
    } while (cursor);
    await Promise.all(concurrent);
    expect(pages).to.equal(5);
    expect(seen).to.deep.equal([...posted].reverse());
    expect(new Set(seen).size).to.equal(seen.length);
    // A new walk sees them all, newest first.
    const all = expectOk(await ws.owner.get(`${messagesUrl(c.id)}?limit=200`)).data;
    expect(all).to.have.length(23 + 10);
    expect(all.slice(10).map((m: { id: string }) => m.id)).to.deep.equal([...posted].reverse());
  });

  it('gives a last page with next_cursor null and has_more false, and an empty channel an empty page', async () => {
    const ws = await newWorkspace();
    const c = await createChannel(ws.owner);
    expect(expectOk(await ws.owner.get(messagesUrl(c.id))).pagination).to.deep.equal({ next_cursor: null, has_more: false });
    await postMessage(ws.owner, c.id, 'one');
    const body = expectOk(await ws.owner.get(`${messagesUrl(c.id)}?limit=1`));
    expect(body.data).to.have.length(1);
    expect(body.pagination).to.deep.equal({ next_cursor: null, has_more: false });
  });

  it('pages thread replies the same way', async () => {
    const ws = await newWorkspace();
    const c = await createChannel(ws.owner);
    const root = await postMessage(ws.owner, c.id, 'root');
    const replies: string[] = [];
    for (let i = 0; i < 5; i++) replies.push((await postMessage(ws.owner, c.id, { content: `r${i}`, thread_id: root.id })).id);
    const p1 = expectOk(await ws.owner.get(`${messagesUrl(c.id)}?thread_id=${root.id}&limit=3`));
    const p2 = expectOk(await ws.owner.get(`${messagesUrl(c.id)}?thread_id=${root.id}&limit=3&cursor=${p1.pagination.next_cursor}`));
    expect([...p1.data, ...p2.data].map((m: { id: string }) => m.id)).to.deep.equal(replies.reverse());
    expect(p2.pagination.has_more).to.equal(false);
  });

  it('reads reactions and thread info of a page without one query per message', async () => {
    const ws = await newWorkspace();
    const c = await createChannel(ws.owner);
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) ids.push((await postMessage(ws.owner, c.id, `m${i}`)).id);
    for (const id of ids.slice(0, 10)) {
      expectOk(await ws.owner.post(`${messagesUrl(c.id)}/${id}/reactions`, { emoji: 'thumbsup' }), 201);
      await postMessage(ws.owner, c.id, { content: 'r', thread_id: id });
    }
    await stack().relay?.drain();
    let page: { reactions: unknown[]; thread: unknown }[] = [];
    const seen = await driverQueries(async () => {
      page = expectOk(await ws.owner.get(`${messagesUrl(c.id)}?limit=50`)).data;
    });
    expect(page.filter((m) => m.reactions.length === 1)).to.have.length(10);
    expect(page.filter((m) => m.thread !== null)).to.have.length(10);
    const queries = seen.filter((sql) => /messages|reactions|threads/.test(sql)).length;
    // One query for the page, threads joined and reactions aggregated: not 30+.
    expect(queries).to.equal(1);
  });
});
