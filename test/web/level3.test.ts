// The web app at feature level 3 (contract §9, §12): read state that follows
// the person across tabs (unread and mention counts, the "new messages" line,
// the tab title), presence dots, and a resumed stream. Found by role and name.
import { expect } from 'chai';
import type { Stack } from '../../services/stack.js';
import { level3Stack, newWorkspace, uniqueName } from '../support/stack.js';
import { axeProblems, openApp, screenshot, signedIn, suiteBrowser } from './browser.js';
import { uploadFile } from '../support/files.js';

describe('web app at feature level 3', function () {
  this.timeout(120_000);
  const b = suiteBrowser();
  let s: Stack;
  before(async () => {
    s = await level3Stack();
  });

  it('keeps unread and mention counts on the server: two tabs of one person follow each other; the new-messages line and the title count', async () => {
    const ws = await newWorkspace(s);
    const me = (await ws.owner.get('/api/v1/users/me')).body.data as { id: string; name: string };
    const bob = await ws.user({ name: uniqueName('bob') });
    const ch = (await ws.owner.post('/api/v1/channels', { name: uniqueName('work') })).body.data as { id: string; name: string };
    const quiet = (await ws.owner.post('/api/v1/channels', { name: uniqueName('quiet') })).body.data as { id: string; name: string };
    await ws.owner.post(`/api/v1/channels/${ch.id}/members`, { user_id: bob.id });
    await bob.client.post(`/api/v1/channels/${ch.id}/messages`, { content: 'read before' });
    const tabA = await signedIn(b, s.url, ws.ownerKey, `/c/${ch.id}`);
    await tabA.page.getByRole('article', { name: /read before/ }).waitFor();
    // Tab A reads #work, then moves to #quiet; Bob writes three messages, one mentioning the owner.
    await tabA.page.getByRole('navigation', { name: 'Conversations' }).getByRole('link', { name: new RegExp(quiet.name) }).click();
    await tabA.page.getByRole('heading', { name: `#${quiet.name}` }).waitFor();
    await bob.client.post(`/api/v1/channels/${ch.id}/messages`, { content: 'first new' });
    await bob.client.post(`/api/v1/channels/${ch.id}/messages`, { content: 'second new' });
    await bob.client.post(`/api/v1/channels/${ch.id}/messages`, {
      content: `third @${me.name}`,
      content_json: { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'third ' }, { type: 'mention', attrs: { id: me.id } }] }] },
    });
    const link = (page: typeof tabA.page) => page.getByRole('navigation', { name: 'Conversations' }).getByRole('link', { name: `${ch.name}, 3 unread, 1 mention` });
    await link(tabA.page).waitFor();
    // A second tab (another device) opened now has the same counts from the server, and the title says so.
    const tabB = await signedIn(b, s.url, ws.ownerKey, `/c/${quiet.id}`);
    await link(tabB.page).waitFor();
    await tabB.page.waitForFunction(() => document.title.startsWith('(3) '));
    await screenshot(tabB.page, 'unread-level3');
    // Reading in tab B draws the line where the person stopped, and clears tab A.
    await link(tabB.page).click();
    const line = tabB.page.getByRole('separator', { name: 'New messages' });
    await line.waitFor();
    const order = await tabB.page.evaluate(() =>
      [...document.querySelectorAll('[role="separator"][aria-label="New messages"], article')].map((el) => (el.tagName === 'ARTICLE' ? el.getAttribute('aria-label')!.split(': ')[1] : 'LINE')),
    );
    expect(order.slice(order.indexOf('LINE') - 1, order.indexOf('LINE') + 2)).to.deep.equal(['read before', 'LINE', 'first new']);
    await screenshot(tabB.page, 'new-messages-line');
    await tabA.page.getByRole('navigation', { name: 'Conversations' }).getByRole('link', { name: ch.name, exact: true }).waitFor();
    await tabA.page.waitForFunction(() => !document.title.startsWith('('));
    tabA.assertClean();
    tabB.assertClean();
  });

  it('shows presence: the dot turns online and offline as the other person opens and closes the app', async () => {
    const ws = await newWorkspace(s);
    const me = (await ws.owner.get('/api/v1/users/me')).body.data as { id: string };
    const bobName = uniqueName('bob');
    const bob = await ws.user({ name: bobName });
    await bob.client.post('/api/v1/dms', { user_ids: [me.id] });
    const app = await signedIn(b, s.url, ws.ownerKey);
    const dm = app.page.getByRole('navigation', { name: 'Conversations' }).getByRole('link', { name: new RegExp(bobName) });
    await dm.getByRole('img', { name: 'offline' }).waitFor();
    const bobApp = await signedIn(b, s.url, bob.key);
    await dm.getByRole('img', { name: 'online' }).waitFor();
    await bobApp.context.close();
    await dm.getByRole('img', { name: 'offline' }).waitFor({ timeout: 70_000 });
    app.assertClean();
  });

  it('resumes a cut stream with Last-Event-ID (every message once, no page fetched); a streamed reply grows and ends; a button reaches the bot; edits have a history', async () => {
    const ws = await newWorkspace(s);
    const bot = await ws.user({ name: uniqueName('agent'), is_agent: true });
    const ch = (await ws.owner.post('/api/v1/channels', { name: uniqueName('l3') })).body.data as { id: string; name: string };
    await ws.owner.post(`/api/v1/channels/${ch.id}/members`, { user_id: bot.id });
    await bot.client.post(`/api/v1/channels/${ch.id}/messages`, { content: 'before the cut' });
    const app = await signedIn(b, s.url, ws.ownerKey, `/c/${ch.id}`);
    const page = app.page;
    await page.getByRole('article', { name: /before the cut/ }).waitFor();
    const pages: string[] = [];
    page.on('request', (r) => /\/messages(\?|$)/.test(r.url()) && r.method() === 'GET' && pages.push(r.url()));
    await app.context.setOffline(true);
    await page.getByRole('status').filter({ hasText: 'Connection lost. Reconnecting' }).waitFor();
    const texts = Array.from({ length: 5 }, (_, i) => `during the cut ${i}`);
    for (const content of texts) await bot.client.post(`/api/v1/channels/${ch.id}/messages`, { content });
    await app.context.setOffline(false);
    for (const t of texts) await page.getByRole('article', { name: new RegExp(t) }).waitFor();
    expect(await page.evaluate(() => [...document.querySelectorAll('article')].map((a) => a.getAttribute('aria-label')).filter((l) => /during the cut/.test(l!)).length)).to.equal(5);
    expect(pages, 'no history page fetched after a resumed reconnect').to.deep.equal([]);

    // A streamed agent reply grows in place, with an indicator, and ends.
    const streamed = await bot.client.post(`/api/v1/channels/${ch.id}/messages`, { content: 'Thinking', streaming: true });
    expect(streamed.status, JSON.stringify(streamed.body)).to.equal(201);
    const reply = page.getByRole('article', { name: /^agent.*: Thinking/ });
    await reply.getByRole('status', { name: /is still writing/ }).waitFor();
    await bot.client.post(`/api/v1/channels/${ch.id}/messages/${streamed.body.data.id}/append`, { content: ' about it' });
    await reply.getByText('Thinking about it').waitFor();
    await screenshot(page, 'streaming-reply');
    await bot.client.post(`/api/v1/channels/${ch.id}/messages/${streamed.body.data.id}/finish`, {});
    await reply.getByRole('status', { name: /is still writing/ }).waitFor({ state: 'detached' });

    // An actionId button is enabled and its click reaches the bot.
    const block = (name: string, props: Record<string, unknown>) => ({ type: `block_${name}`, attrs: { blockName: name, version: 1, props } });
    await bot.client.post(`/api/v1/channels/${ch.id}/messages`, {
      content: 'Deploy?',
      content_json: { type: 'doc', content: [block('button_group', { buttons: [{ label: 'Approve', actionId: 'approve', style: 'primary' }] })] },
    });
    const approve = page.getByRole('article', { name: /Deploy\?/ }).getByRole('button', { name: 'Approve' });
    expect(await approve.isDisabled()).to.equal(false);
    const acted = page.waitForResponse((r) => r.url().endsWith('/api/v1/interactions/actions'));
    await approve.click();
    expect((await acted).status()).to.equal(202);
    await page.getByRole('article', { name: /Deploy\?/ }).getByText('Sent').waitFor();
    // "Sent" on the filled button is readable (it was muted grey on the accent colour).
    expect(await axeProblems(page)).to.deep.equal([]);

    // Edit history: the earlier version is one click away.
    const mine = await ws.owner.post(`/api/v1/channels/${ch.id}/messages`, { content: 'first wording' });
    await ws.owner.patch(`/api/v1/channels/${ch.id}/messages/${mine.body.data.id}`, { content: 'second wording' });
    await page.getByRole('article', { name: /second wording/ }).getByRole('button', { name: '(edited)' }).click();
    const history = page.getByRole('dialog', { name: 'Edit history' });
    await history.getByText('first wording').waitFor();
    // Drawn above the list, whole (inside the message's row it showed as a sliver).
    expect((await history.boundingBox())!.height).to.be.greaterThan(150);
    await screenshot(page, 'edit-history');
    await page.keyboard.press('Escape');

    // Search (level 3): the result, with the words marked, and a click lands on the message.
    // Snippets read as the message does, without its markdown marks.
    await ws.owner.post(`/api/v1/channels/${ch.id}/messages`, { content: 'a **bold** wording with `code`' });
    const search = page.getByRole('searchbox', { name: 'Search messages' });
    await search.fill('wording');
    await search.press('Enter');
    const results = page.getByRole('complementary', { name: 'Search results' });
    const found = results.getByRole('button', { name: /second wording/ });
    await found.waitFor();
    expect(await found.locator('mark').allInnerTexts()).to.deep.equal(['wording']);
    const marked = results.getByRole('button', { name: /bold wording/ });
    expect(await marked.locator('.snippet').innerText()).to.equal('a bold wording with code');
    await screenshot(page, 'search-results');
    await found.click();
    await page.getByRole('article', { name: /second wording/ }).waitFor();
    app.assertClean();
  });

  it('shows a file posted in a channel to its members, and "This file was removed." once it is deleted (contract §17)', async () => {
    const ws = await newWorkspace(s);
    const bob = await ws.user({ name: uniqueName('bob') });
    const ch = (await ws.owner.post('/api/v1/channels', { name: uniqueName('files'), is_private: true })).body.data as { id: string };
    await ws.owner.post(`/api/v1/channels/${ch.id}/members`, { user_id: bob.id });
    const up = await uploadFile(s.url, { key: ws.ownerKey, data: Buffer.from('the plan\n'), name: 'plan.txt', type: 'text/plain' });
    expect(up.status, up.text).to.equal(201);
    const f = up.body.data as { id: string; name: string; size: number; content_type: string };
    await ws.owner.post(`/api/v1/channels/${ch.id}/messages`, {
      content: 'Shared a file: plan.txt',
      metadata: { type: 'axid.file', data: { file_id: f.id, name: f.name, size: f.size, content_type: f.content_type } },
    });
    const app = await signedIn(b, s.url, bob.key, `/c/${ch.id}`);
    await app.page.getByRole('link', { name: /Download plan\.txt/ }).waitFor();
    expect((await ws.owner.delete(`/api/v1/files/${f.id}`)).status).to.equal(204);
    await app.page.getByText('This file was removed.').waitFor();
    expect(await app.page.getByRole('link', { name: /Download plan\.txt/ }).count()).to.equal(0);
    app.assertClean();
  });

  it('keeps mute and theme on the server: another device of the person has them', async () => {
    const ws = await newWorkspace(s);
    const ch = (await ws.owner.post('/api/v1/channels', { name: uniqueName('noisy') })).body.data as { id: string; name: string };
    const laptop = await signedIn(b, s.url, ws.ownerKey, `/c/${ch.id}`);
    await laptop.page.getByRole('button', { name: 'Mute' }).click();
    await laptop.page.getByRole('button', { name: 'Muted' }).waitFor();
    const saved = laptop.page.waitForResponse((r) => r.url().endsWith('/api/v1/users/me/preferences') && r.request().method() === 'PATCH');
    await laptop.page.goto('/settings');
    await laptop.page.getByRole('tab', { name: 'Preferences' }).click();
    await laptop.page.getByRole('radio', { name: 'Dark' }).check();
    expect((await saved).status()).to.equal(200);
    // A phone (its own browser, its own key) opens the app: muted and dark, as on the laptop.
    const phone = await signedIn(b, s.url, ws.ownerKey, `/c/${ch.id}`, { width: 390, height: 844 });
    await phone.page.getByRole('button', { name: 'Muted' }).waitFor();
    await phone.page.waitForFunction(() => document.documentElement.dataset.theme === 'dark');
    // (The phone's sidebar is closed: hidden, so looked for with includeHidden.)
    expect(await phone.page.getByRole('link', { name: `${ch.name}, muted`, includeHidden: true }).count()).to.equal(1);
    laptop.assertClean();
    phone.assertClean();
  });

  it("shows a scoped key's scopes and how many conversations it reaches in the key list (docs/security.md, \"Scopes\")", async () => {
    const ws = await newWorkspace(s);
    const ch = (await ws.owner.post('/api/v1/channels', { name: uniqueName('ops') })).body.data as { id: string };
    const keyName = uniqueName('runtime');
    const made = await ws.owner.post('/api/v1/api-keys', { name: keyName, scopes: ['read', 'messages:write'], conversation_ids: [ch.id] });
    expect(made.status).to.equal(201);
    // Signed in with the key pasted (kept), then the settings page.
    const app = await openApp(b, s.url, '/');
    await app.page.getByText('Sign in with an API key').click();
    await app.page.getByLabel('API key').fill(ws.ownerKey);
    await app.page.getByRole('button', { name: 'Sign in with key' }).click();
    await app.page.locator('[data-stream-state="live"]').first().waitFor({ state: 'attached' });
    await app.page.goto(`${s.url}/settings`);
    const row = app.page.getByRole('row', { name: new RegExp(keyName) });
    await row.waitFor();
    expect(await row.textContent()).to.include('read, messages:write').and.include('1 conversation');
    // The browser's own key has no limits: nothing is shown for them.
    expect(await app.page.getByRole('row', { name: /this browser/ }).textContent()).not.to.include('conversation');
  });

  it('shows a message\'s link previews as cards, and its author removes them (contract §14)', async () => {
    const ws = await newWorkspace(s);
    const ch = (await ws.owner.post('/api/v1/channels', { name: uniqueName('links') })).body.data as { id: string };
    const m = (await ws.owner.post(`/api/v1/channels/${ch.id}/messages`, { content: 'See https://example.com/release' })).body.data as { id: string; content: string };
    // The preview as the worker stores it (the fetching itself: test/api/link-previews.test.ts).
    const preview = { url: 'https://example.com/release', title: 'Release 2.0', description: 'What changed', site_name: 'Example', image_url: null };
    await s.rt.db('messages').where({ id: m.id }).update({ unfurls: JSON.stringify([preview]) });
    const app = await signedIn(b, s.url, ws.ownerKey, `/c/${ch.id}`);
    const card = app.page.getByRole('link', { name: /Release 2\.0/ });
    await card.waitFor();
    expect(await card.getAttribute('href')).to.equal('https://example.com/release');
    expect(await card.textContent()).to.include('What changed');
    await app.page.getByRole('button', { name: 'Remove link previews' }).click();
    await app.page.getByRole('link', { name: /Release 2\.0/ }).waitFor({ state: 'detached' });
    expect(((await ws.owner.get(`/api/v1/channels/${ch.id}/messages/${m.id}`)).body.data as { unfurls: unknown[] }).unfurls).to.deep.equal([]);
    app.assertClean();
  });
});

