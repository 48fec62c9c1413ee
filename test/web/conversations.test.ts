// The web app, round two (issue 24): nothing typed lands in the wrong
// conversation (drafts, dialogs that take and give back focus), replies count
// live for the replier, the switcher lists a person once, and a hook post is
// a sender of its own. Everything found by role and accessible name.
import { expect } from 'chai';
import type { Locator, Page } from 'playwright-core';
import { newWorkspace, stack, uniqueName } from '../support/stack.js';
import { screenshot, signedIn, suiteBrowser } from './browser.js';
import { channelWith } from './seed.js';

const sidebar = (page: Page) => page.getByRole('navigation', { name: 'Conversations' });
const focused = (l: Locator) => l.evaluate((el) => el === document.activeElement);

/** Tab and Shift+Tab 12 times each: focus never leaves the dialog. */
async function expectTrapped(page: Page, dialog: Locator) {
  for (const key of ['Tab', 'Shift+Tab']) {
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press(key);
      expect(await dialog.evaluate((d) => d.contains(document.activeElement)), `${key} #${i} left the dialog`).to.equal(true);
    }
  }
}

describe('web app: conversations keep what belongs to them', function () {
  this.timeout(90_000);
  const b = suiteBrowser();

  it('keeps each draft in its own conversation across a switch and a reload', async () => {
    const ws = await newWorkspace();
    const one = await channelWith(ws);
    const two = await channelWith(ws);
    const app = await signedIn(b, stack().url, ws.ownerKey, `/c/${one.id}`);
    const page = app.page;
    await page.getByLabel(`Message #${one.name}`).fill('half a thought for one');
    await sidebar(page).getByRole('link', { name: new RegExp(two.name) }).click();
    const second = page.getByLabel(`Message #${two.name}`);
    expect(await second.inputValue()).to.equal('');
    await second.fill('draft for two');
    // Enter in two sends two's text only.
    await second.press('Enter');
    await page.getByRole('article', { name: /draft for two/ }).and(page.locator('[data-state="sent"]')).waitFor();
    await sidebar(page).getByRole('link', { name: new RegExp(one.name) }).click();
    expect(await page.getByLabel(`Message #${one.name}`).inputValue()).to.equal('half a thought for one');
    await page.reload();
    expect(await page.getByLabel(`Message #${one.name}`).inputValue()).to.equal('half a thought for one');
    await sidebar(page).getByRole('link', { name: new RegExp(two.name) }).click();
    expect(await page.getByLabel(`Message #${two.name}`).inputValue()).to.equal('');
    const posted = await ws.owner.get(`/api/v1/channels/${one.id}/messages`);
    expect(posted.body.data).to.have.length(0);
    app.assertClean();
  });

  it('moves focus into every dialog, keeps it there and gives it back; Ctrl+K from the composer never posts', async () => {
    const ws = await newWorkspace();
    const ch = await channelWith(ws);
    const other = await channelWith(ws);
    const app = await signedIn(b, stack().url, ws.ownerKey, `/c/${ch.id}`);
    const page = app.page;
    const composer = page.getByLabel(`Message #${ch.name}`);
    await composer.click();
    await page.keyboard.press('Control+k');
    // Typed at once, with no wait: it goes to the switcher, and Enter opens the pick.
    await page.keyboard.type(other.name);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: `#${other.name}` }).waitFor();
    expect((await ws.owner.get(`/api/v1/channels/${ch.id}/messages`)).body.data).to.have.length(0);
    expect(await composer.count()).to.equal(0);

    const dialogs: [string, string][] = [
      ['Jump to…', 'Jump to a conversation'],
      ['Create a channel', 'Create a channel'],
    ];
    for (const [button, title] of dialogs) {
      const trigger = page.getByRole('button', { name: button });
      await trigger.focus();
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('dialog', { name: title });
      await dialog.waitFor();
      expect(await dialog.evaluate((d) => d.contains(document.activeElement)), `${title} took focus`).to.equal(true);
      await expectTrapped(page, dialog);
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      expect(await focused(trigger), `${title} gave focus back`).to.equal(true);
    }
    app.assertClean();
  });

  it('counts a reply live for the person who wrote it, and lists a person once in the switcher', async () => {
    const ws = await newWorkspace();
    const bobName = uniqueName('bob');
    const bob = await ws.user({ name: bobName });
    const ch = await channelWith(ws, [bob.id]);
    await ws.owner.post(`/api/v1/channels/${ch.id}/messages`, { content: 'root of a thread' });
    const app = await signedIn(b, stack().url, bob.key, `/c/${ch.id}`);
    const page = app.page;
    const root = page.getByRole('article', { name: /root of a thread/ }).first();
    await root.hover();
    await root.getByRole('button', { name: 'Reply in thread' }).click();
    const thread = page.getByRole('complementary', { name: 'Thread' });
    await thread.getByLabel('Reply in thread').fill('my reply');
    await thread.getByLabel('Reply in thread').press('Enter');
    await thread.getByRole('article', { name: /my reply/ }).and(page.locator('[data-state="sent"]')).waitFor();
    await page.getByRole('main').getByRole('button', { name: '1 reply' }).waitFor();

    // Bob has a DM with the owner: the owner is listed once.
    const me = await ws.owner.get('/api/v1/users/me');
    expect((await bob.client.post('/api/v1/dms', { user_ids: [me.body.data.id] })).status).to.be.oneOf([200, 201]);
    await page.reload();
    await page.getByRole('heading', { name: `#${ch.name}` }).waitFor();
    await page.keyboard.press('Control+k');
    const search = page.getByRole('combobox', { name: 'Search channels and people' });
    await search.fill(me.body.data.display_name || me.body.data.name);
    const options = page.getByRole('listbox').getByRole('option');
    await options.first().waitFor();
    expect(await options.count()).to.equal(1);
    app.assertClean();
  });

  it("never hides a hook post under a person's message: its own author line, app badge and username", async () => {
    const ws = await newWorkspace();
    const ch = await channelWith(ws);
    const hook = await ws.owner.post('/api/v1/webhooks/incoming', { channel_id: ch.id, name: 'CI' });
    expect(hook.status, JSON.stringify(hook.body)).to.equal(201);
    await ws.owner.post(`/api/v1/channels/${ch.id}/messages`, { content: 'a person writes first' });
    const res = await fetch(`${stack().url}/hooks/compat/${hook.body.data.id}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ text: 'deploy finished', username: 'Deploy Bot' }),
    });
    expect(res.status).to.equal(200);
    const app = await signedIn(b, stack().url, ws.ownerKey, `/c/${ch.id}`);
    const post = app.page.getByRole('article', { name: /^Deploy Bot: deploy finished/ });
    await post.waitFor();
    await post.getByText('Deploy Bot', { exact: true }).waitFor();
    // The hook's badge (as Slack's APP), not the BOT of agents: a hook is not its creator (test/web/agents.test.ts).
    await post.getByText('app', { exact: true }).waitFor();
    await screenshot(app.page, 'hook-post');
    app.assertClean();
  });

  it('shows a Slack-compatible post as sent: mrkdwn, username and icon, attachments as cards; emoji shortcodes and the picker', async () => {
    const ws = await newWorkspace();
    const ch = await channelWith(ws);
    const hook = await ws.owner.post('/api/v1/webhooks/incoming', { channel_id: ch.id, name: 'CI' });
    const res = await fetch(`${stack().url}/hooks/compat/${hook.body.data.id}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        text: 'Deploy *done* :rocket: by _ci_',
        username: 'Release Train',
        icon_emoji: ':zap:',
        attachments: [
          {
            color: 'danger',
            title: 'Build 42',
            title_link: 'https://ci.example.com/42',
            text: 'see <https://ci.example.com/42/log|the log>',
            fields: [
              { title: 'Branch', value: 'main', short: true },
              { title: 'Duration', value: '3m', short: true },
            ],
            footer: 'CI server',
          },
        ],
      }),
    });
    expect(res.status).to.equal(200);
    const app = await signedIn(b, stack().url, ws.ownerKey, `/c/${ch.id}`);
    const page = app.page;
    const post = page.getByRole('article', { name: /^Release Train: / });
    const card = post.getByRole('group', { name: 'Attachment' });
    await card.waitFor(); // drawn once the worker has rendered the attachments (message.updated)
    expect(await post.getByText('done', { exact: true }).evaluate((el) => el.tagName)).to.equal('STRONG');
    expect(await post.getByText('ci', { exact: true }).evaluate((el) => el.tagName)).to.equal('EM');
    await post.getByText(/Deploy\s*done\s*🚀/).first().waitFor(); // :rocket: drawn as the emoji
    expect(await card.getByRole('link', { name: 'Build 42' }).getAttribute('href')).to.equal('https://ci.example.com/42');
    expect(await card.getByRole('link', { name: 'the log' }).getAttribute('href')).to.equal('https://ci.example.com/42/log');
    expect((await card.getByRole('listitem').allInnerTexts()).map((t) => t.trim())).to.deep.equal(['Branch: main', 'Duration: 3m']);
    await card.getByText('CI server').waitFor();
    await post.getByText('⚡').waitFor(); // the icon_emoji as the avatar
    await post.getByText('app', { exact: true }).waitFor();
    await screenshot(page, 'hook-attachments');

    // The composer's emoji picker: a dialog with its own searchbox, the pick goes in the text, recents come first next time.
    const composer = page.getByLabel(`Message #${ch.name}`);
    await composer.fill('ship it ');
    await page.getByRole('button', { name: 'Insert emoji' }).click();
    const picker = page.getByRole('dialog', { name: 'Emoji' });
    const search = picker.getByRole('searchbox', { name: 'Search emoji' });
    expect(await focused(search)).to.equal(true);
    await search.fill('party');
    await picker.getByRole('button', { name: 'party popper' }).click();
    await picker.waitFor({ state: 'detached' });
    expect(await composer.inputValue()).to.equal('ship it 🎉');
    await composer.press('Enter');
    await page.getByRole('article', { name: /ship it 🎉/ }).and(page.locator('[data-state="sent"]')).waitFor();
    await page.getByRole('button', { name: 'Insert emoji' }).click();
    await picker.getByRole('region', { name: 'Recently used' }).getByRole('button', { name: 'party popper' }).waitFor();
    await screenshot(page, 'emoji-picker');
    await page.keyboard.press('Escape');
    // A :shortcode: typed by a person is drawn too.
    await composer.fill('nice :tada: work');
    await composer.press('Enter');
    await page.getByRole('article', { name: /nice :tada: work/ }).getByText('nice 🎉 work').waitFor();
    app.assertClean();
  });

  it("asks for the open conversation's newest page once, before the pages that count other conversations' unread", async () => {
    const ws = await newWorkspace();
    const open = await channelWith(ws);
    const others = [await channelWith(ws), await channelWith(ws)];
    for (const c of [open, ...others]) await ws.owner.post(`/api/v1/channels/${c.id}/messages`, { content: `hello ${c.name}` });
    const app = await signedIn(b, stack().url, ws.ownerKey);
    const page = app.page;
    const asked: string[] = [];
    page.on('request', (r) => {
      const m = /\/api\/v1\/channels\/([^/]+)\/messages\?/.exec(r.url());
      if (m && r.method() === 'GET') asked.push(m[1]!);
    });
    // The other conversations' pages (for their unread counts) follow once it has answered.
    const othersAsked = page.waitForRequest((r) => others.some((c) => r.url().includes(`/channels/${c.id}/messages?`)));
    // A reload at the conversation's address (signed in: the browser kept its key).
    await page.goto(`/c/${open.id}`);
    await page.getByRole('article', { name: new RegExp(`hello ${open.name}`) }).waitFor();
    await othersAsked;
    expect(asked[0], 'the open conversation first').to.equal(open.id);
    expect(asked.filter((id) => id === open.id).length, 'asked for once').to.equal(1);
    app.assertClean();
  });
});
