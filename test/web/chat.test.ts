// The web app in Chromium against the real stack: two people chatting live,
// bot blocks, private channels, a cut stream, hostile content.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { uploadFile } from '../support/files.js';
import { newWorkspace, stack, uniqueName, type TestWorkspace } from '../support/stack.js';
import { openApp, screenshot, signedIn, suiteBrowser } from './browser.js';

async function expectFocused(locator: ReturnType<Page['locator']>) {
  await locator.waitFor();
  expect(await locator.evaluate((el) => el === document.activeElement), 'focused').to.equal(true);
}

const message = (page: Page, text: string) => page.locator('article.message', { hasText: text });

async function channelWith(ws: TestWorkspace, body: Record<string, unknown>, members: string[] = []) {
  const res = await ws.owner.post('/api/v1/channels', { name: uniqueName('ch'), ...body });
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  for (const id of members) expect((await ws.owner.post(`/api/v1/channels/${res.body.data.id}/members`, { user_id: id })).status).to.equal(201);
  return res.body.data as { id: string; name: string };
}

describe('web app: chat in the browser', function () {
  this.timeout(90_000);
  const b = suiteBrowser();

  it('lets two people chat live: channel, members, typing, messages, reactions, threads, edits, deletes, files', async () => {
    const ws = await newWorkspace();
    const bobName = uniqueName('bob');
    const bob = await ws.user({ name: bobName });
    const alice = await signedIn(b, stack().url, ws.ownerKey);
    alice.page.on('dialog', (d) => void d.accept());

    // Bob signs in by pasting his key.
    const bobApp = await openApp(b, stack().url, '/');
    await bobApp.page.getByLabel('API key').fill(bob.key);
    await bobApp.page.getByRole('button', { name: 'Sign in' }).click();
    await bobApp.page.locator('[data-stream-state="live"]').waitFor();
    // The pasted key is not kept: the app made its own.
    const stored = await bobApp.page.evaluate(() => localStorage.getItem('axid.session') ?? '');
    expect(stored).to.not.include(bob.key);
    expect(JSON.parse(stored).name).to.match(/^Web: Chrome \d{4}-\d{2}-\d{2}$/);

    // Alice creates a channel and adds Bob.
    const name = uniqueName('project');
    await alice.page.getByRole('button', { name: 'Create a channel' }).click();
    await alice.page.getByLabel('Name').fill(name);
    await alice.page.getByRole('button', { name: 'Create', exact: true }).click();
    await alice.page.getByRole('heading', { name: `#${name}` }).waitFor();
    await alice.page.getByRole('button', { name: 'Members' }).click();
    await alice.page.getByLabel('Add a member').selectOption(bob.id);
    await alice.page.getByRole('button', { name: 'Add', exact: true }).click();
    await alice.page.getByRole('button', { name: `Remove ${bobName}` }).waitFor();
    await alice.page.keyboard.press('Escape');

    // Bob sees the channel arrive and opens it.
    await bobApp.page.getByRole('link', { name: new RegExp(name) }).click();
    await bobApp.page.getByRole('heading', { name: `#${name}` }).waitFor();

    // Typing shows on Bob's side; Enter sends; it arrives live.
    const composer = alice.page.getByLabel(`Message #${name}`);
    await composer.fill('');
    await composer.pressSequentially('Hello Bob');
    await bobApp.page.getByText(/is typing/).waitFor();
    await composer.press('Shift+Enter');
    await composer.pressSequentially('second line');
    await composer.press('Enter');
    await message(alice.page, 'Hello Bob').and(alice.page.locator('[data-state="sent"]')).waitFor();
    const live = message(bobApp.page, 'Hello Bob');
    await live.waitFor();
    expect(await live.locator('.body').innerText()).to.match(/Hello Bob\s+second line/);

    // Bob reacts; Alice sees the count and who reacted.
    await live.hover();
    await live.getByRole('button', { name: 'Add reaction' }).click();
    const picker = bobApp.page.getByRole('dialog', { name: 'Emoji' });
    await picker.getByRole('searchbox', { name: 'Search emoji' }).fill('tada');
    await picker.getByRole('button', { name: 'party popper' }).click();
    const reaction = message(alice.page, 'Hello Bob').locator('.reaction');
    await reaction.filter({ hasText: '1' }).waitFor();
    expect(await reaction.getAttribute('title')).to.include(bobName);

    // Bob replies in a thread; Alice sees the reply count and opens the thread.
    await live.hover();
    await live.getByRole('button', { name: 'Reply in thread' }).click();
    const threadPanel = bobApp.page.getByRole('complementary', { name: 'Thread' });
    await threadPanel.getByLabel('Reply in thread').fill('a reply from Bob');
    await threadPanel.getByLabel('Reply in thread').press('Enter');
    await threadPanel.getByText('a reply from Bob').waitFor();
    await bobApp.page.keyboard.press('Escape');
    await message(alice.page, 'Hello Bob').getByRole('button', { name: '1 reply' }).click();
    await alice.page.getByRole('complementary', { name: 'Thread' }).getByText('a reply from Bob').waitFor();
    await screenshot(alice.page, 'thread');
    await alice.page.keyboard.press('Escape');
    await alice.page.getByRole('complementary', { name: 'Thread' }).waitFor({ state: 'detached' });

    // Alice edits, then deletes; Bob follows.
    const mine = message(alice.page, 'Hello Bob');
    await mine.hover();
    await mine.getByRole('button', { name: 'Edit message' }).click();
    await alice.page.getByRole('textbox', { name: 'Edit message' }).fill('Hello Bob, edited');
    await alice.page.getByRole('button', { name: 'Save' }).click();
    await message(bobApp.page, 'Hello Bob, edited').getByText('(edited)').waitFor();
    await message(alice.page, 'Hello Bob, edited').hover();
    await message(alice.page, 'Hello Bob, edited').getByRole('button', { name: 'Delete message' }).click();
    await message(bobApp.page, 'Hello Bob, edited').waitFor({ state: 'detached' });

    // Alice uploads a file (slowed down so the progress bar shows); Bob downloads it.
    const cdp = await alice.context.newCDPSession(alice.page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 1_000_000 });
    const bytes = Buffer.alloc(1_500_000, 'axid ');
    await alice.page.locator('.composer input[type=file]').first().setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: bytes });
    await alice.page.getByRole('progressbar', { name: 'Uploading notes.txt' }).waitFor();
    const link = message(bobApp.page, 'notes.txt').getByRole('link', { name: /Download notes.txt/ });
    await link.waitFor({ timeout: 30_000 });
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
    const [download] = await Promise.all([bobApp.page.waitForEvent('download'), link.click()]);
    const downloaded = await download.path();
    const { readFileSync } = await import('node:fs');
    expect(readFileSync(downloaded).equals(bytes)).to.equal(true);

    await screenshot(bobApp.page, 'channel-two-people');
    alice.assertClean();
    bobApp.assertClean();
    await alice.context.close();
    await bobApp.context.close();
  });

  it("renders a bot's blocks: url buttons open a new tab, actionId buttons are disabled at level 2, cards and banners show", async () => {
    const ws = await newWorkspace();
    const bot = await ws.user({ is_agent: true });
    const ch = await channelWith(ws, {}, [bot.id]);
    const block = (name: string, props: Record<string, unknown>) => ({ type: `block_${name}`, attrs: { blockName: name, version: 1, props } });
    const first = await ws.owner.post(`/api/v1/channels/${ch.id}/messages`, { content: 'Shipping **build 42** to production now :rocket:' });
    await bot.client.post(`/api/v1/channels/${ch.id}/messages`, { content: 'On it.', thread_id: first.body.data.id });
    await ws.owner.post(`/api/v1/channels/${ch.id}/messages/${first.body.data.id}/reactions`, { emoji: '🚀' });
    const posted = await bot.client.post(`/api/v1/channels/${ch.id}/messages`, {
      content: 'Deploy finished',
      metadata: { type: 'deploy.finished', data: { build: 42, ok: true } },
      content_json: {
        type: 'doc',
        content: [
          block('heading', { text: 'Deploy 42', level: 2 }),
          block('alert_banner', { variant: 'warning', text: 'Error rate is up', actionLabel: 'Open dashboard', actionUrl: 'https://example.com/dash' }),
          block('button_group', { buttons: [{ label: 'View logs', url: 'https://example.com/logs', style: 'primary' }, { label: 'Roll back', actionId: 'rollback', style: 'danger' }] }),
          block('tracker_issue_card', { url: 'https://linear.app/acme/issue/ACME-1', title: 'Fix the flaky deploy', status: 'In progress' }),
          block('repo_pr_card', { url: 'https://github.com/acme/app/pull/7', title: 'Retry the upload', state: 'open' }),
          block('callout', { text: 'Remember the changelog', emoji: '📝' }),
          block('quote', { text: 'Ship it' }),
          block('divider', {}),
          block('text', { text: 'All good.' }),
          block('link_unfurl', { url: 'https://example.com/post', title: 'Release notes', description: 'What changed' }),
          block('image', { url: 'https://example.com/chart.png', alt: 'A chart' }),
        ],
      },
    });
    expect(posted.status, JSON.stringify(posted.body)).to.equal(201);
    const app = await signedIn(b, stack().url, ws.ownerKey, `/c/${ch.id}`, { width: 1280, height: 1000 });
    const m = message(app.page, 'Deploy 42');
    await m.waitFor();
    await app.page.mouse.move(5, 990);
    await screenshot(app.page, 'channel');
    const logs = m.getByRole('link', { name: 'View logs' });
    expect(await logs.getAttribute('target')).to.equal('_blank');
    expect(await logs.getAttribute('rel')).to.include('noopener');
    const rollback = m.getByRole('button', { name: 'Roll back' });
    expect(await rollback.isDisabled()).to.equal(true);
    expect(await rollback.getAttribute('title')).to.match(/not available/);
    await m.getByRole('note', { name: 'warning alert' }).getByText('Error rate is up').waitFor();
    expect(await m.getByRole('link', { name: /Fix the flaky deploy/ }).getAttribute('href')).to.equal('https://linear.app/acme/issue/ACME-1');
    expect(await m.getByRole('link', { name: /Retry the upload/ }).getAttribute('href')).to.equal('https://github.com/acme/app/pull/7');
    await m.getByText('Remember the changelog').waitFor();
    await m.getByText('bot', { exact: true }).waitFor();
    // The metadata: hidden from people unless they turn on the developer view (Settings, Preferences), then collapsed.
    expect(await m.getByText('metadata: deploy.finished').count()).to.equal(0);
    await app.page.getByRole('button', { name: 'Settings', exact: true }).click();
    await app.page.getByRole('tab', { name: 'Preferences' }).click();
    await app.page.getByRole('checkbox', { name: 'Show message metadata' }).check();
    await app.page.getByRole('button', { name: '← Back to chat' }).click();
    await app.page.getByRole('link', { name: new RegExp(ch.name) }).click();
    await m.getByText('metadata: deploy.finished').click();
    expect(await m.locator('details.metadata pre').innerText()).to.include('"build": 42');
    await screenshot(app.page, 'bot-blocks');
    app.assertClean();
    await app.context.close();

    // A phone-sized window in the dark theme: the sidebar hides behind its button.
    const phone = await signedIn(b, stack().url, ws.ownerKey, `/c/${ch.id}`, { width: 380, height: 800 }, 'dark');
    await message(phone.page, 'Deploy 42').waitFor();
    expect(await phone.page.getByRole('navigation', { name: 'Conversations' }).isVisible()).to.equal(false);
    await screenshot(phone.page, 'channel-narrow-dark');
    await phone.page.getByRole('button', { name: 'Show conversations' }).click();
    await phone.page.getByRole('link', { name: new RegExp(ch.name) }).waitFor();
    await screenshot(phone.page, 'sidebar-narrow-dark');
    phone.assertClean();
  });

  it('opens a DM with a bot from the Ctrl+K switcher, mentions by name into content_json, and closes with Escape', async () => {
    const ws = await newWorkspace();
    const botName = uniqueName('helper');
    const bot = await ws.user({ name: botName, is_agent: true });
    const app = await signedIn(b, stack().url, ws.ownerKey);
    const page = app.page;
    await page.keyboard.press('Control+k');
    const search = page.getByRole('combobox', { name: 'Search channels and people' });
    await expectFocused(search);
    await search.fill(botName);
    await search.press('Enter');
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    // The DM is listed with its bot marked, and opened.
    const dm = page.getByRole('navigation', { name: 'Conversations' }).getByRole('link', { name: new RegExp(botName) });
    await dm.getByText('bot', { exact: true }).waitFor();
    const composer = page.getByPlaceholder(new RegExp(`Message ${botName}`));
    await composer.pressSequentially(`ping @${botName.slice(0, 6)}`);
    await page.getByRole('listbox', { name: 'Mention someone' }).getByRole('option', { name: new RegExp(botName) }).waitFor();
    await composer.press('Enter'); // picks the highlighted person
    await composer.pressSequentially('please');
    await composer.press('Enter'); // sends
    await page.locator('article.message[data-state="sent"]', { hasText: 'please' }).locator('.mention').waitFor();
    const conversations = await ws.owner.get('/api/v1/dms');
    const sent = await ws.owner.get(`/api/v1/dms/${conversations.body.data[0].id}/messages`);
    expect(sent.body.data[0].mentioned_user_ids).to.deep.equal([bot.id]);
    expect(sent.body.data[0].content).to.equal(`ping @${botName} please`);
    // A refused send stays, marked, with the API's own message, and can be retried.
    await page.route('**/api/v1/dms/*/messages', (route) =>
      route.request().method() === 'POST'
        ? route.fulfill({ status: 429, contentType: 'application/json', body: JSON.stringify({ error: { code: 'rate_limited', message: 'slow down: 5 requests left' } }) })
        : route.fallback(),
    );
    await composer.pressSequentially('one more');
    await composer.press('Enter');
    const failed = page.locator('article.message[data-state="failed"]', { hasText: 'one more' });
    await failed.getByText('Not sent.').waitFor();
    // In plain words, not the API's own message.
    await page.getByRole('alert').filter({ hasText: 'You are going a bit fast. Wait a few seconds and try again.' }).waitFor();
    await page.unroute('**/api/v1/dms/*/messages');
    await failed.getByRole('button', { name: 'Retry' }).click();
    await page.locator('article.message[data-state="sent"]', { hasText: 'one more' }).waitFor();
    expect(await page.locator('article.message', { hasText: 'one more' }).count()).to.equal(1);

    // Escape closes a dialog, and focus returns where it was.
    await page.getByRole('button', { name: 'Create a channel' }).click();
    await page.getByRole('dialog', { name: 'Create a channel' }).waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    await expectFocused(page.getByRole('button', { name: 'Create a channel' }));
    app.assertClean();
  });

  it('shows an uploaded image inline (allowed by the CSP) and lets a non-member join and leave a public channel', async () => {
    const ws = await newWorkspace();
    const erin = await ws.user();
    const ch = await channelWith(ws, {});
    // A 2x2 PNG, posted the way the app posts files (metadata axid.file).
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVQI12P8z8DAwMDAxMDAwMDAAAANHQEDK+mmyAAAAABJRU5ErkJggg==', 'base64');
    const file = await uploadFile(stack().url, { key: ws.ownerKey, data: png, name: 'dot.png', type: 'image/png' });
    expect(file.status, file.text).to.equal(201);
    const f = file.body.data;
    await ws.owner.post(`/api/v1/channels/${ch.id}/messages`, {
      content: 'Shared a file: dot.png',
      metadata: { type: 'axid.file', data: { file_id: f.id, name: f.name, size: f.size, content_type: f.content_type } },
    });
    const app = await signedIn(b, stack().url, erin.key, `/c/${ch.id}`);
    const img = app.page.locator('img.file-image');
    await img.waitFor();
    await app.page.waitForFunction(() => {
      const el = document.querySelector('img.file-image') as HTMLImageElement | null;
      return Boolean(el?.complete && el.naturalWidth > 0);
    });
    // Erin is not a member: she reads, cannot post, joins, posts, leaves.
    await app.page.getByText('Join the channel to post.').waitFor();
    await app.page.getByRole('button', { name: 'Join channel' }).click();
    await app.page.getByLabel(`Message #${ch.name}`).fill('joined!');
    await app.page.getByLabel(`Message #${ch.name}`).press('Enter');
    await app.page.locator('article.message[data-state="sent"]', { hasText: 'joined!' }).waitFor();
    await app.page.getByRole('button', { name: 'Leave' }).click();
    await app.page.getByRole('button', { name: 'Join channel' }).waitFor();
    const members = await ws.owner.get(`/api/v1/channels/${ch.id}/members`);
    expect(members.body.data.map((m: { user_id: string }) => m.user_id)).to.not.include(erin.id);
    app.assertClean();
  });

  it('never shows a private channel to a non-member, live or on load', async () => {
    const ws = await newWorkspace();
    const carol = await ws.user();
    const hidden = await channelWith(ws, { is_private: true, name: uniqueName('secret') });
    const app = await signedIn(b, stack().url, carol.key);
    // A private channel created while Carol is connected, then a public one: the public one
    // arriving proves the private one's event (earlier) was not sent to her.
    const later = await channelWith(ws, { is_private: true, name: uniqueName('secret-later') });
    const open = await channelWith(ws, { name: uniqueName('open') });
    await app.page.getByRole('link', { name: new RegExp(open.name) }).waitFor();
    const sidebar = await app.page.getByRole('navigation', { name: 'Conversations' }).innerText();
    expect(sidebar).to.not.include(hidden.name);
    expect(sidebar).to.not.include(later.name);
    await app.page.goto(`/c/${hidden.id}`);
    await app.page.getByText('does not exist or you cannot see it').waitFor();
    app.assertClean();
    await app.context.close();
  });

  it('after the stream is cut, shows every message posted meanwhile, once', async () => {
    const ws = await newWorkspace();
    const dan = await ws.user();
    const ch = await channelWith(ws, {}, [dan.id]);
    await ws.owner.post(`/api/v1/channels/${ch.id}/messages`, { content: 'before the cut' });
    const app = await signedIn(b, stack().url, ws.ownerKey, `/c/${ch.id}`);
    await message(app.page, 'before the cut').waitFor();

    // Offline: the app drops its stream at once (the 'offline' event) and cannot reconnect.
    await app.context.setOffline(true);
    await app.page.locator('[data-stream-state="reconnecting"]').waitFor();
    const texts = Array.from({ length: 8 }, (_, i) => `during the cut ${i}`);
    for (const content of texts) expect((await dan.client.post(`/api/v1/channels/${ch.id}/messages`, { content })).status).to.equal(201);
    await app.context.setOffline(false);
    await app.page.locator('[data-stream-state="live"]').waitFor();
    for (const t of texts) await message(app.page, t).waitFor();
    // And the live stream works again afterwards.
    await dan.client.post(`/api/v1/channels/${ch.id}/messages`, { content: 'after the cut' });
    await message(app.page, 'after the cut').waitFor();
    const shown = await app.page.locator('article.message .body').allInnerTexts();
    for (const t of [...texts, 'before the cut', 'after the cut']) expect(shown.filter((s) => s.trim() === t), t).to.have.length(1);
    app.assertClean();
    await app.context.close();
  });

  it('renders hostile messages, names and block props inert', async () => {
    const ws = await newWorkspace();
    const evil = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=1</script>';
    const mallory = await ws.user({ name: uniqueName('mallory') });
    expect((await mallory.client.patch('/api/v1/users/me', { display_name: evil })).status).to.equal(200);
    const ch = await channelWith(ws, { name: uniqueName('<svg onload=window.__pwned=1>') }, [mallory.id]);
    const hostile = [
      '<script>window.__pwned=1</script>',
      '<img src=x onerror="window.__pwned=1">',
      '[click me](javascript:window.__pwned=1)',
      '<a href="jav&#x09;ascript:window.__pwned=1">entity link</a>',
      '<svg><script>window.__pwned=1</script></svg>',
      '&lt;script&gt;window.__pwned=1&lt;/script&gt;',
      '<iframe src="javascript:window.__pwned=1"></iframe>',
      '![x](javascript:window.__pwned=1)',
    ];
    // Each with some text, so that what the server strips on write still leaves a message.
    for (const [i, content] of hostile.entries()) {
      const res = await mallory.client.post(`/api/v1/channels/${ch.id}/messages`, { content: `hostile ${i}: ${content}` });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
    }
    const block = (name: string, props: Record<string, unknown>) => ({ type: `block_${name}`, attrs: { blockName: name, version: 1, props } });
    const withBlocks = await mallory.client.post(`/api/v1/channels/${ch.id}/messages`, {
      content: 'blocks',
      content_json: {
        type: 'doc',
        content: [
          block('callout', { text: evil, emoji: '<b>' }),
          block('heading', { text: '<script>window.__pwned=1</script>', level: 1 }),
          block('link_unfurl', { url: 'https://example.com', title: evil }),
          { type: 'paragraph', content: [{ type: 'text', text: '<img src=x onerror=window.__pwned=1>' }] },
        ],
      },
    });
    expect(withBlocks.status, JSON.stringify(withBlocks.body)).to.equal(201);
    await mallory.client.post(`/api/v1/channels/${ch.id}/messages`, { content: 'the last one' });

    // Tall enough that the virtual list renders every message.
    const app = await signedIn(b, stack().url, ws.ownerKey, `/c/${ch.id}`, { width: 1280, height: 2400 });
    await message(app.page, 'the last one').waitFor();
    await app.page.getByRole('button', { name: 'Members' }).click();
    await app.page.getByRole('complementary', { name: 'Channel members' }).getByText(evil).waitFor();
    const report = await app.page.evaluate(() => ({
      pwned: (window as unknown as { __pwned?: number }).__pwned ?? null,
      scripts: document.querySelectorAll('#app script, #app iframe, #app svg:not(.icon-svg), #app object').length,
      handlers: [...document.querySelectorAll('#app *')].filter((el) => [...el.attributes].some((a) => a.name.startsWith('on'))).length,
      badLinks: [...document.querySelectorAll('#app a[href]:not(.skip-link), #app img[src]')]
        .map((el) => el.getAttribute('href') ?? el.getAttribute('src')!)
        .filter((u) => !/^(https:|mailto:|\/)/.test(u)),
    }));
    expect(report).to.deep.equal({ pwned: null, scripts: 0, handlers: 0, badLinks: [] });
    // The text shows as text.
    await app.page.getByText('<img src=x onerror=window.__pwned=1>', { exact: true }).waitFor();
    await screenshot(app.page, 'hostile');
    app.assertClean();
    await app.context.close();
  });
});
