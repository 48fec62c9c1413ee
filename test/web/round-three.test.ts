// The web app, round three (issue 34): dialogs opened from a message drawn
// above the list (not inside its row), mentions that keep the message's
// markdown, focus and Tab stops, and the emoji data loaded only when needed.
// Found by role and accessible name, against the production build.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { newWorkspace, stack, uniqueName } from '../support/stack.js';
import { axeProblems, screenshot, signedIn, suiteBrowser } from './browser.js';
import { channelWith, post } from './seed.js';

const article = (page: Page, text: string | RegExp) => page.getByRole('article', { name: typeof text === 'string' ? new RegExp(`: ${text}$`) : text });

describe('web app: round three', function () {
  this.timeout(90_000);
  const b = suiteBrowser();

  it('adds a reaction picked on a message in the middle of a long list to that message, from a picker drawn above the list', async () => {
    const ws = await newWorkspace();
    const ch = await channelWith(ws);
    const ids: string[] = [];
    for (let i = 1; i <= 30; i++) ids.push((await post(ws, ch.id, `message number ${i}`)).id);
    const app = await signedIn(b, stack().url, ws.ownerKey, `/c/${ch.id}`);
    const page = app.page;
    await article(page, 'message number 30').waitFor();
    // The last few are on screen; one that has messages below it.
    const target = article(page, 'message number 26');
    await target.hover();
    await target.getByRole('button', { name: 'Add reaction' }).click();
    const picker = page.getByRole('dialog', { name: 'Emoji' });
    await picker.getByRole('searchbox', { name: 'Search emoji' }).fill('tada');
    // The picker is drawn at the page's root, above every row.
    expect(await picker.evaluate((d) => d.closest('.timeline') === null && d.closest('article') === null)).to.equal(true);
    // Nothing is drawn over it: the point at the emoji's centre is the emoji.
    const emoji = picker.getByRole('button', { name: 'party popper' });
    expect(await emoji.evaluate((el) => {
      const r = el.getBoundingClientRect();
      return el.contains(document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2));
    })).to.equal(true);
    await emoji.click();
    await target.getByRole('button', { name: /🎉/ }).waitFor();
    const reactions = await ws.owner.get(`/api/v1/channels/${ch.id}/messages?limit=50`);
    const withReactions = (reactions.body.data as { id: string; reactions: { emoji: string }[] }[]).filter((m) => m.reactions.length);
    expect(withReactions.map((m) => m.id)).to.deep.equal([ids[25]]);
    await screenshot(page, 'reaction-mid-list');
    app.assertClean();
  });

  it('keeps the markdown and line breaks of a message with a mention', async () => {
    const ws = await newWorkspace();
    const bob = { name: uniqueName('bob'), id: '' };
    bob.id = (await ws.user({ name: bob.name })).id;
    const ch = await channelWith(ws, [bob.id]);
    const app = await signedIn(b, stack().url, ws.ownerKey, `/c/${ch.id}`);
    const page = app.page;
    const composer = page.getByLabel(`Message #${ch.name}`);
    await composer.pressSequentially(`@${bob.name.slice(0, 4)}`);
    await page.getByRole('option', { name: new RegExp(bob.name) }).click();
    await composer.pressSequentially('please look at **this part** and `npm test`');
    await composer.press('Shift+Enter');
    await composer.pressSequentially('then _reply_');
    await composer.press('Enter');
    const sent = page.locator('article.message[data-state="sent"]', { hasText: 'please look' });
    await sent.waitFor();
    const body = sent.locator('.body');
    expect(await body.locator('.mention').innerText()).to.equal(`@${bob.name}`);
    expect(await body.locator('strong').innerText()).to.equal('this part');
    expect(await body.locator('code').innerText()).to.equal('npm test');
    expect(await body.locator('em').innerText()).to.equal('reply');
    expect(await body.locator('br').count()).to.equal(1);
    expect(await body.innerText()).to.match(/npm test\s*\n\s*then reply/);
    expect(await body.innerText()).to.not.include('**');
    // The server knows who was mentioned.
    const stored = await ws.owner.get(`/api/v1/channels/${ch.id}/messages`);
    expect(stored.body.data[0].mentioned_user_ids).to.deep.equal([bob.id]);
    app.assertClean();
  });

  it('puts the caret in the new conversation after Ctrl+K and Enter', async () => {
    const ws = await newWorkspace();
    const one = await channelWith(ws);
    const two = await channelWith(ws);
    const app = await signedIn(b, stack().url, ws.ownerKey, `/c/${one.id}`);
    const page = app.page;
    // From a button of the sidebar and from the page itself.
    for (const [start, to] of [['sidebar', two], ['page', one]] as const) {
      if (start === 'sidebar') await page.getByRole('button', { name: /Jump to/ }).focus();
      else await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
      await page.keyboard.press('Control+k');
      const input = page.getByRole('dialog', { name: 'Jump to a conversation' }).getByRole('combobox');
      await input.pressSequentially(to.name);
      await page.getByRole('option', { name: `#${to.name}` }).and(page.locator('[aria-selected="true"]')).waitFor();
      await input.press('Enter');
      await page.getByRole('heading', { name: `#${to.name}` }).waitFor();
      await page.keyboard.type(`typed after jumping from the ${start}`);
      expect(await page.getByLabel(`Message #${to.name}`).inputValue()).to.equal(`typed after jumping from the ${start}`);
    }
    app.assertClean();
  });

  it('makes each message one Tab stop (actions by arrow keys) and offers a skip link first', async () => {
    const ws = await newWorkspace();
    const bot = await ws.user({ is_agent: true });
    const ch = await channelWith(ws, [bot.id]);
    const first = await post(ws, ch.id, 'first of three');
    await ws.owner.post(`/api/v1/channels/${ch.id}/messages/${first.id}/reactions`, { emoji: '🚀' });
    await bot.client.post(`/api/v1/channels/${ch.id}/messages`, { content: 'a reply', thread_id: first.id });
    await post(ws, ch.id, 'second of three');
    await post(ws, ch.id, 'third of three');
    const app = await signedIn(b, stack().url, ws.ownerKey, `/c/${ch.id}`);
    const page = app.page;
    await article(page, 'third of three').waitFor();
    // The skip link is the first stop and leads to the message box.
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await page.keyboard.press('Tab');
    const skip = page.getByRole('link', { name: 'Skip to the message box' });
    expect(await skip.evaluate((el) => el === document.activeElement)).to.equal(true);
    await screenshot(page, 'skip-link');
    await page.keyboard.press('Enter');
    expect(await page.getByLabel(`Message #${ch.name}`).evaluate((el) => el === document.activeElement)).to.equal(true);
    // Shift+Tab from the message box goes through the messages, one stop each.
    const stops: string[] = [];
    for (let i = 0; i < 3; i++) {
      await page.keyboard.press('Shift+Tab');
      stops.push(await page.evaluate(() => `${document.activeElement?.tagName.toLowerCase()} ${document.activeElement?.getAttribute('aria-label') ?? ''}`));
    }
    expect(stops.map((s) => s.replace(/^article .*: /, 'article '))).to.deep.equal(['article third of three', 'article second of three', 'article first of three']);
    // On the first message: Right walks its actions (the reaction, the thread, then the toolbar), Escape comes back, Down goes to the next.
    const firstMessage = article(page, 'first of three');
    await page.keyboard.press('ArrowRight');
    expect(await page.evaluate(() => document.activeElement?.classList.contains('reaction'))).to.equal(true);
    await page.keyboard.press('ArrowRight');
    expect(await page.evaluate(() => document.activeElement?.textContent)).to.equal('1 reply');
    await page.keyboard.press('ArrowRight');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).to.equal('Add reaction');
    await screenshot(page, 'message-actions-keyboard');
    await page.keyboard.press('Escape');
    expect(await firstMessage.evaluate((el) => el === document.activeElement)).to.equal(true);
    await page.keyboard.press('ArrowDown');
    expect(await article(page, 'second of three').evaluate((el) => el === document.activeElement)).to.equal(true);
    // Left from the message is its last action; Enter on an action does it (the picker opens from the keyboard).
    await page.keyboard.press('ArrowLeft');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).to.equal('Delete message');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('Enter');
    await page.getByRole('dialog', { name: 'Emoji' }).waitFor();
    await page.keyboard.press('Escape');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).to.equal('Add reaction');
    expect(await axeProblems(page)).to.deep.equal([]);
    app.assertClean();
  });

  it('opens a channel with reactions and shortcodes without loading the emoji data; the picker loads it', async () => {
    const ws = await newWorkspace();
    const ch = await channelWith(ws);
    const m = await post(ws, ch.id, 'Shipped :tada: at 10:30:45, :+1: everyone');
    for (const emoji of ['tada', 'thumbsup', '🚀']) expect((await ws.owner.post(`/api/v1/channels/${ch.id}/messages/${m.id}/reactions`, { emoji })).status).to.equal(201);
    const app = await signedIn(b, stack().url, ws.ownerKey, '/');
    const page = app.page;
    const emojiData: string[] = [];
    page.on('request', (r) => {
      // The data's chunks (emojibase-data's compact.json and shortcodes), whatever the build names them.
      if (/\/assets\/(compact|github)-[^/]+\.js$/.test(new URL(r.url()).pathname)) emojiData.push(r.url());
    });
    await page.getByRole('navigation', { name: 'Conversations' }).getByRole('link', { name: new RegExp(ch.name) }).click();
    const message = page.locator('article.message', { hasText: 'Shipped' });
    await message.waitFor();
    expect(await message.locator('.body').innerText()).to.equal('Shipped 🎉 at 10:30:45, 👍️ everyone');
    expect(await message.locator('.reaction').allInnerTexts()).to.deep.equal(['🎉 1', '👍️ 1', '🚀 1']);
    // A request made after the render: any the render made has been seen by then (the browser reports them in order).
    await Promise.all([page.waitForResponse((r) => r.url().includes('/members')), page.getByRole('button', { name: 'Members' }).click()]);
    await page.keyboard.press('Escape');
    expect(emojiData, 'no emoji data before the picker').to.deep.equal([]);
    await page.getByRole('button', { name: 'Insert emoji' }).click();
    await page.getByRole('dialog', { name: 'Emoji' }).getByRole('button', { name: 'party popper' }).first().waitFor();
    expect(emojiData.length, 'the picker loads the data').to.be.greaterThan(0);
    app.assertClean();
  });

  it('draws controls as icons, keeps the selected default channel and DM items readable and named as seen, and fits the keys table on a phone', async () => {
    const ws = await newWorkspace();
    const bot = await ws.user({ is_agent: true, name: uniqueName('helper') });
    const ch = await channelWith(ws, [bot.id], { is_default: true });
    await post(ws, ch.id, 'a message to hover');
    expect((await ws.owner.post('/api/v1/dms', { user_ids: [bot.id] })).status).to.be.oneOf([200, 201]);
    const app = await signedIn(b, stack().url, ws.ownerKey, `/c/${ch.id}`);
    const page = app.page;
    await article(page, 'a message to hover').hover();
    // No control is an emoji or symbol character (they showed as empty boxes without a colour emoji font).
    const glyphs = await page.evaluate(() =>
      [...document.querySelectorAll('button, .btn, [role="toolbar"] *')]
        .map((el) => [...el.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent ?? '').join(''))
        .filter((t) => /[\p{Extended_Pictographic}\u2190-\u21ff\u2630\u2715\u270e]/u.test(t)),
    );
    expect(glyphs).to.deep.equal([]);
    expect(await page.locator('.composer svg, .toolbar svg').count()).to.be.greaterThan(4);
    await screenshot(page, 'icons-default-channel');
    expect(await axeProblems(page)).to.deep.equal([]);
    app.assertClean();
    await app.context.close();

    const phone = await signedIn(b, stack().url, ws.ownerKey, '/settings', { width: 390, height: 844 });
    await phone.page.getByRole('button', { name: /Revoke/ }).first().waitFor();
    const overflow = await phone.page.evaluate(() => ({ page: document.documentElement.scrollWidth - innerWidth, table: Math.max(...[...document.querySelectorAll('table')].map((t) => t.getBoundingClientRect().right - innerWidth)) }));
    await screenshot(phone.page, 'keys-phone');
    expect(overflow.page, 'the page scrolls sideways').to.be.at.most(0);
    expect(overflow.table, 'the table runs past the screen').to.be.at.most(0);
    phone.assertClean();
  });

  it('saves an edit with Enter (Shift+Enter breaks the line)', async () => {
    const ws = await newWorkspace();
    const ch = await channelWith(ws);
    await post(ws, ch.id, 'before the edit');
    const app = await signedIn(b, stack().url, ws.ownerKey, `/c/${ch.id}`);
    const page = app.page;
    const m = article(page, 'before the edit');
    await m.hover();
    await m.getByRole('button', { name: 'Edit message' }).click();
    const box = page.getByRole('textbox', { name: 'Edit message' });
    await box.fill('after the edit');
    await box.press('Shift+Enter');
    await box.pressSequentially('on two lines');
    await box.press('Enter');
    await box.waitFor({ state: 'detached' });
    const edited = page.locator('article.message', { hasText: 'on two lines' });
    await edited.getByText('(edited)').waitFor();
    expect((await ws.owner.get(`/api/v1/channels/${ch.id}/messages`)).body.data[0].content).to.equal('after the edit\non two lines');
    app.assertClean();
  });

  it('sends again by itself, once back online, what failed offline (mentions kept), and clears its error', async () => {
    const ws = await newWorkspace();
    const bob = { name: uniqueName('bob'), id: '' };
    bob.id = (await ws.user({ name: bob.name })).id;
    const ch = await channelWith(ws, [bob.id]);
    const app = await signedIn(b, stack().url, ws.ownerKey, `/c/${ch.id}`);
    const page = app.page;
    await app.context.setOffline(true);
    const composer = page.getByLabel(`Message #${ch.name}`);
    await composer.fill(`written offline for @${bob.name} with **bold**`);
    await composer.press('Enter');
    const failed = page.locator('article.message[data-state="failed"]', { hasText: 'written offline' });
    await failed.getByText('Not sent: it goes when the connection is back.').waitFor();
    await page.locator('.composer [role="alert"]').waitFor();
    await screenshot(page, 'send-failed-offline');
    await app.context.setOffline(false);
    await page.locator('article.message[data-state="sent"]', { hasText: 'written offline' }).waitFor();
    expect(await page.locator('article.message', { hasText: 'written offline' }).count()).to.equal(1);
    expect(await page.locator('.composer [role="alert"]').count()).to.equal(0);
    const stored = (await ws.owner.get(`/api/v1/channels/${ch.id}/messages`)).body.data;
    expect(stored).to.have.length(1);
    expect(stored[0].mentioned_user_ids).to.deep.equal([bob.id]);
    app.assertClean();
  });

  it('keeps the view at the bottom while the last message grows', async () => {
    const ws = await newWorkspace();
    const ch = await channelWith(ws);
    for (let i = 1; i < 30; i++) await post(ws, ch.id, `filler ${i}`);
    const app = await signedIn(b, stack().url, ws.ownerKey, `/c/${ch.id}`);
    const page = app.page;
    await article(page, 'filler 29').waitFor();
    // A reply arrives while the person watches the end, then grows.
    const last = await post(ws, ch.id, 'the last one');
    await article(page, 'the last one').waitFor();
    const atBottom = () => page.evaluate(() => {
      const t = document.querySelector('.timeline')!;
      return t.scrollHeight - t.scrollTop - t.clientHeight <= 2;
    });
    await page.waitForFunction(() => {
      const t = document.querySelector('.timeline')!;
      return t.scrollHeight - t.scrollTop - t.clientHeight <= 2;
    });
    // It grows the way a streamed reply does: the same message, longer (here through edits).
    const lines: string[] = [];
    for (let n = 1; n <= 3; n++) {
      for (let i = 0; i < 8; i++) lines.push(`grown line ${n}.${i}`);
      if (n === 1) lines.unshift('the last one');
      expect((await ws.owner.patch(`/api/v1/channels/${ch.id}/messages/${last.id}`, { content: lines.join('\n') })).status).to.equal(200);
      await page.locator('article.message', { hasText: `grown line ${n}.7` }).waitFor();
      await page.waitForFunction(() => {
        const t = document.querySelector('.timeline')!;
        return t.scrollHeight - t.scrollTop - t.clientHeight <= 2;
      }, undefined, { timeout: 5000 });
    }
    expect(await atBottom()).to.equal(true);
    expect(await page.getByText('grown line 3.7').isVisible()).to.equal(true);
    await screenshot(page, 'grown-at-bottom');
    app.assertClean();
  });

  it('draws no "New messages" line above messages that arrive while the person watches', async () => {
    const ws = await newWorkspace();
    const bob = await ws.user({ name: uniqueName('bob') });
    const one = await channelWith(ws, [bob.id]);
    const two = await channelWith(ws);
    await post(ws, one.id, 'read before');
    const app = await signedIn(b, stack().url, ws.ownerKey, `/c/${one.id}`);
    const page = app.page;
    const sidebar = page.getByRole('navigation', { name: 'Conversations' });
    await article(page, 'read before').waitFor();
    // Away and back: the conversation has a place where the person stopped reading.
    await sidebar.getByRole('link', { name: new RegExp(two.name) }).click();
    await page.getByRole('heading', { name: `#${two.name}` }).waitFor();
    await sidebar.getByRole('link', { name: new RegExp(one.name) }).click();
    await article(page, 'read before').waitFor();
    await bob.client.post(`/api/v1/channels/${one.id}/messages`, { content: 'said while watched' });
    await article(page, 'said while watched').waitFor();
    await bob.client.post(`/api/v1/channels/${one.id}/messages`, { content: 'and another' });
    await article(page, 'and another').waitFor();
    expect(await page.getByRole('separator', { name: 'New messages' }).count()).to.equal(0);
    // Away again: what Bob says meanwhile is new when the person comes back.
    await sidebar.getByRole('link', { name: new RegExp(two.name) }).click();
    await page.getByRole('heading', { name: `#${two.name}` }).waitFor();
    await bob.client.post(`/api/v1/channels/${one.id}/messages`, { content: 'said while away' });
    await sidebar.getByRole('link', { name: new RegExp(`${one.name}.*1 unread`) }).waitFor();
    await sidebar.getByRole('link', { name: new RegExp(one.name) }).click();
    await article(page, 'said while away').waitFor();
    await page.getByRole('separator', { name: 'New messages' }).waitFor();
    app.assertClean();
  });

  it('offers desktop notifications in the chat until the person answers', async () => {
    const ws = await newWorkspace();
    const ch = await channelWith(ws);
    const app = await signedIn(b, stack().url, ws.ownerKey, `/c/${ch.id}`);
    const page = app.page;
    const prompt = page.getByRole('region', { name: 'Desktop notifications' });
    await prompt.waitFor();
    await screenshot(page, 'notifications-prompt');
    // Not now: remembered across a reload.
    await prompt.getByRole('button', { name: 'Not now' }).click();
    await prompt.waitFor({ state: 'detached' });
    await page.reload();
    await page.getByRole('heading', { name: `#${ch.name}` }).waitFor();
    expect(await prompt.count()).to.equal(0);
    // Turn on: the browser is asked from the click (granted here), and the prompt goes.
    await page.evaluate(() => localStorage.removeItem('axid.notifications'));
    await app.context.grantPermissions(['notifications']);
    await page.reload();
    await prompt.getByRole('button', { name: 'Turn on notifications' }).click();
    await prompt.waitFor({ state: 'detached' });
    expect(await page.evaluate(() => localStorage.getItem('axid.notifications'))).to.equal('on');
    app.assertClean();
  });
});

