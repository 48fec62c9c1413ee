// Opening one message where it lives: a message's "Copy link" permalink
// (feature level 2 and up) and a search result (level 3) land on it in its
// conversation, and in its thread for a reply, scrolled to and highlighted,
// even when it is older than the newest page the timeline loads (50
// messages): the history is paged back until it is there. Found by role and
// name; the highlighted message is the one with aria-current.
import { expect } from 'chai';
import type { Locator, Page } from 'playwright-core';
import type { Stack } from '../../services/stack.js';
import type { Client } from '../support/client.js';
import { level3Stack, newWorkspace, stack, uniqueName } from '../support/stack.js';
import { openTab, screenshot, signedIn, suiteBrowser } from './browser.js';

/** More than the app's newest page (50) and than one page of the jump (200): the target needs several pages back. */
const FILLERS = 320;

async function post(client: Client, channelId: string, body: Record<string, unknown>) {
  const res = await client.post(`/api/v1/channels/${channelId}/messages`, body);
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return res.body.data as { id: string; channel_id: string };
}

/** `n` messages, eight requests at a time (their order does not matter: they only push the target back). */
async function fill(client: Client, channelId: string, n: number, label: string) {
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < n) await post(client, channelId, { content: `${label} ${next++}` });
    }),
  );
}

/** Waits until the element's top lies within the viewport (scrolled to, not merely in the DOM): virtua may correct the position once rows are measured. */
async function waitOnScreen(page: Page, locator: Locator) {
  const el = await locator.elementHandle();
  await page.waitForFunction((e) => {
    const r = (e as Element).getBoundingClientRect();
    return r.height > 0 && r.top >= 0 && r.top + Math.min(r.height, 40) <= innerHeight && r.left >= 0 && r.left < innerWidth;
  }, el);
}

/** The message, highlighted (aria-current) and on screen. */
async function expectLanded(page: Page, scope: Locator, text: RegExp) {
  const target = scope.getByRole('article', { name: text });
  await target.and(scope.locator('[aria-current="true"]')).waitFor();
  await waitOnScreen(page, target);
  return target;
}

describe('web app: permalinks and jumping to a message', function () {
  this.timeout(120_000);
  const b = suiteBrowser();

  it('copies a link to a message and to a thread reply; opened in a fresh tab after hundreds of newer messages, each lands on its message, highlighted', async () => {
    const s = stack();
    const ws = await newWorkspace(s);
    const bob = await ws.user({ name: uniqueName('bob') });
    const ch = (await ws.owner.post('/api/v1/channels', { name: uniqueName('links') })).body.data as { id: string; name: string };
    await ws.owner.post(`/api/v1/channels/${ch.id}/members`, { user_id: bob.id });
    for (const content of ['Morning all', 'The build is green again', 'Who takes the release notes?']) await post(ws.owner, ch.id, { content });
    const root = await post(bob.client, ch.id, { content: 'the release plan' });
    const reply = await post(bob.client, ch.id, { content: 'a reply worth linking', thread_id: root.id });
    const target = await post(bob.client, ch.id, { content: 'the decision worth linking' });

    const app = await signedIn(b, s.url, ws.ownerKey, `/c/${ch.id}`);
    await app.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: s.url });
    const page = app.page;
    const copyLink = async (article: Locator, shot?: string) => {
      await article.hover();
      if (shot) await screenshot(page, shot);
      await article.getByRole('button', { name: 'Copy link' }).click();
      await article.getByRole('button', { name: 'Copy link' }).and(page.getByTitle('Copied')).waitFor();
      return page.evaluate(() => navigator.clipboard.readText());
    };
    const targetLink = await copyLink(page.getByRole('main').getByRole('article', { name: /the decision worth linking/ }), 'copy-link');
    expect(targetLink).to.equal(`${s.url}/c/${ch.id}/m/${target.id}`);
    await page.getByRole('main').getByRole('article', { name: /the release plan/ }).getByRole('button', { name: '1 reply' }).click();
    const thread = page.getByRole('complementary', { name: 'Thread' });
    const replyLink = await copyLink(thread.getByRole('article', { name: /a reply worth linking/ }));
    expect(replyLink).to.equal(`${s.url}/c/${ch.id}/m/${reply.id}`);

    // Hundreds of newer messages: both are now far outside the newest page.
    await fill(bob.client, ch.id, FILLERS, 'later message');
    const fresh = await openTab(app.context, `/c/${ch.id}`);
    await fresh.page.getByRole('article', { name: /later message/ }).first().waitFor();
    expect(await fresh.page.getByRole('article', { name: /the decision worth linking/ }).count(), 'not in the newest page').to.equal(0);

    // A fresh tab (signed in: same browser) opened at the copied link lands on the message.
    const opened = await openTab(app.context, new URL(targetLink).pathname);
    const main = opened.page.getByRole('main');
    await expectLanded(opened.page, main, /the decision worth linking/);
    await screenshot(opened.page, 'permalink-desktop');

    // The reply's link opens its thread too, the reply highlighted there, its root in view in the conversation.
    const openedReply = await openTab(app.context, new URL(replyLink).pathname);
    const replyThread = openedReply.page.getByRole('complementary', { name: 'Thread' });
    await expectLanded(openedReply.page, replyThread, /a reply worth linking/);
    await waitOnScreen(openedReply.page, openedReply.page.getByRole('main').getByRole('article', { name: /the release plan/ }));
    await screenshot(openedReply.page, 'permalink-reply-desktop');

    // On a phone, signed in by the link of a new browser.
    const phone = await signedIn(b, s.url, ws.ownerKey, new URL(targetLink).pathname, { width: 390, height: 844 });
    await expectLanded(phone.page, phone.page.getByRole('main'), /the decision worth linking/);
    await screenshot(phone.page, 'permalink-phone');

    // A link to a message that is gone says so in plain words.
    const gone = await post(bob.client, ch.id, { content: 'soon deleted' });
    await bob.client.delete(`/api/v1/channels/${ch.id}/messages/${gone.id}`);
    const dead = await openTab(app.context, `/c/${ch.id}/m/${gone.id}`);
    await dead.page.getByRole('alert').filter({ hasText: 'That message was deleted, or you cannot see it.' }).waitFor();

    for (const p of [app, fresh, opened, openedReply, phone, dead]) p.assertClean();
  });

  it('level 3: a search result older than the loaded history loads the history around it, scrolls to it and highlights it', async () => {
    const s: Stack = await level3Stack();
    const ws = await newWorkspace(s);
    const ch = (await ws.owner.post('/api/v1/channels', { name: uniqueName('deep') })).body.data as { id: string };
    await post(ws.owner, ch.id, { content: 'the zanzibar rollout went fine' });
    await fill(ws.owner, ch.id, FILLERS, 'filler message');
    const app = await signedIn(b, s.url, ws.ownerKey, `/c/${ch.id}`);
    const page = app.page;
    await page.getByRole('article', { name: /filler message/ }).first().waitFor();
    expect(await page.getByRole('article', { name: /zanzibar/ }).count(), 'not in the newest page').to.equal(0);
    const pages: string[] = [];
    page.on('request', (r) => r.method() === 'GET' && /\/channels\/[^/]+\/messages\?/.test(r.url()) && pages.push(r.url()));
    const search = page.getByRole('searchbox', { name: 'Search messages' });
    await search.fill('zanzibar');
    await search.press('Enter');
    await page.getByRole('complementary', { name: 'Search results' }).getByRole('button', { name: /zanzibar rollout/ }).click();
    await expectLanded(page, page.getByRole('main'), /zanzibar rollout/);
    expect(new URL(page.url()).pathname).to.match(new RegExp(`^/c/${ch.id}/m/[0-9a-f-]{36}$`));
    // Level 3: one page around the message, not the history paged back.
    expect(pages.filter((u) => u.includes('around=')), pages.join('\n')).to.have.length(1);
    expect(pages.filter((u) => u.includes('cursor=')), pages.join('\n')).to.have.length(0);
    await screenshot(page, 'search-jump');
    app.assertClean();
  });

  it('level 3: a permalink 11,000 messages back opens around it; scrolling down loads newer pages; live messages wait; "Jump to newest" returns', async () => {
    const s: Stack = await level3Stack();
    const ws = await newWorkspace(s);
    const bob = await ws.user({ name: uniqueName('bob') });
    const ch = (await ws.owner.post('/api/v1/channels', { name: uniqueName('far') })).body.data as { id: string };
    await ws.owner.post(`/api/v1/channels/${ch.id}/members`, { user_id: bob.id });
    // 12,000 messages in one statement, a second apart; no event_xid, so the relay does not publish them.
    const { rows } = await s.rt.db.raw(
      `INSERT INTO messages (workspace_id, channel_id, author_id, content, created_at)
       SELECT ?, ?, ?, 'bulk message ' || g, now() - (12001 - g) * interval '1 second' FROM generate_series(1, 12000) g
       RETURNING id, content`,
      [ws.workspaceId, ch.id, bob.id],
    );
    const target = (rows as { id: string; content: string }[]).find((r) => r.content === 'bulk message 1000')!;

    const app = await signedIn(b, s.url, ws.ownerKey, `/c/${ch.id}`);
    await app.page.getByRole('article', { name: /bulk message 12000/ }).waitFor();
    const pages: string[] = [];
    app.context.on('request', (r) => r.method() === 'GET' && /\/channels\/[^/]+\/messages\?/.test(r.url()) && pages.push(r.url()));
    const opened = await openTab(app.context, `/c/${ch.id}/m/${target.id}`);
    const page = opened.page;
    const main = page.getByRole('main');
    await expectLanded(page, main, /bulk message 1000(?!\d)/);
    expect(pages.filter((u) => u.includes('around=')), pages.join('\n')).to.have.length(1);
    const jumpToNewest = main.getByRole('button', { name: /Jump to newest/ });
    await jumpToNewest.waitFor();
    await screenshot(page, 'permalink-far-back');

    // Posted while the tab shows the segment far back: not added at its end (the tab at the live end shows it).
    const live = (await bob.client.post(`/api/v1/channels/${ch.id}/messages`, { content: 'posted while far back' })).body.data as { id: string };
    await app.page.getByRole('article', { name: /posted while far back/ }).waitFor();

    // Scrolling down loads the pages newer than the segment (after=prev_cursor).
    await page.waitForFunction(() => {
      const list = document.querySelector('[role="log"][aria-label="Messages"]') as HTMLElement;
      list.scrollTop = list.scrollHeight;
      // The newest message shown, at the bottom of what is loaded: at least 120 past the target.
      const shown = [...list.querySelectorAll('[role="article"], article')].map((a) => Number(/bulk message (\d+)/.exec(a.textContent ?? '')?.[1] ?? 0));
      return Math.max(0, ...shown) >= 1120;
    }, undefined, { polling: 100 });
    expect(pages.filter((u) => u.includes('after=')).length, pages.join('\n')).to.be.at.least(2);
    expect(await main.getByRole('article', { name: /posted while far back/ }).count(), 'not next to the segment').to.equal(0);
    await screenshot(page, 'permalink-far-back-newer');

    // "Jump to newest" returns to the live end, the message posted meanwhile there.
    await jumpToNewest.click();
    await waitOnScreen(page, main.getByRole('article', { name: /posted while far back/ }));
    await main.getByRole('article', { name: /bulk message 12000/ }).waitFor();
    expect(await jumpToNewest.count()).to.equal(0);
    // Live again: a new message is appended.
    await bob.client.post(`/api/v1/channels/${ch.id}/messages`, { content: 'and after the return' });
    await waitOnScreen(page, main.getByRole('article', { name: /and after the return/ }));
    await screenshot(page, 'permalink-jump-newest');
    expect(live.id).to.be.a('string');

    // A message sent from a segment far back goes to the live end, and the view with it.
    const again = await openTab(app.context, `/c/${ch.id}/m/${target.id}`);
    const againMain = again.page.getByRole('main');
    await expectLanded(again.page, againMain, /bulk message 1000(?!\d)/);
    const composer = againMain.getByRole('textbox').last();
    await composer.fill('sent from far back');
    await composer.press('Enter');
    await waitOnScreen(again.page, againMain.getByRole('article', { name: /sent from far back/ }));
    await againMain.getByRole('article', { name: /and after the return/ }).waitFor();
    expect(await againMain.getByRole('button', { name: /Jump to newest/ }).count()).to.equal(0);
    again.assertClean();
    for (const p of [app, opened]) p.assertClean();
  });
});
