// The web app, habits people bring from Slack and Mattermost (issue 34): a
// Threads view (threads one follows, unread replies marked), All unreads,
// search filters with suggestions, Up to edit one's last message, Alt+↑/↓
// between conversations and a shortcut help. Used as a person would, found by
// role and accessible name, against the production build at level 3; each new
// screen checked by axe at desktop and phone width.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import type { Stack } from '../../services/stack.js';
import { level3Stack, newWorkspace, uniqueName, type TestWorkspace } from '../support/stack.js';
import { uploadFile } from '../support/files.js';
import { axeProblems, screenshot, signedIn, suiteBrowser } from './browser.js';

type Client = TestWorkspace['owner'];

async function channel(ws: TestWorkspace, name: string, members: string[] = []) {
  const res = await ws.owner.post('/api/v1/channels', { name: uniqueName(name) });
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  for (const id of members) expect((await ws.owner.post(`/api/v1/channels/${res.body.data.id}/members`, { user_id: id })).status).to.equal(201);
  return res.body.data as { id: string; name: string };
}

async function post(client: Client, channelId: string, body: Record<string, unknown> | string) {
  const res = await client.post(`/api/v1/channels/${channelId}/messages`, typeof body === 'string' ? { content: body } : body);
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return res.body.data as { id: string; created_at: string };
}

const mentioning = (user: { id: string; name: string }, text: string) => ({
  content: `${text} @${user.name}`,
  content_json: { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: `${text} ` }, { type: 'mention', attrs: { id: user.id } }] }] },
});

const sidebar = (page: Page) => page.getByRole('navigation', { name: 'Conversations' });

/** axe at desktop and phone width on whatever `show` opens; screenshots named `web-<name>-<width>`. */
async function axeBothWidths(page: Page, name: string, show: () => Promise<void>, problems: string[]) {
  for (const [width, height, tag] of [[1280, 800, 'desktop'], [390, 844, 'phone']] as const) {
    await page.setViewportSize({ width, height });
    await show();
    for (const p of await axeProblems(page)) problems.push(`${name} ${tag}: ${p}`);
    await screenshot(page, `habits-${name}-${tag}`);
  }
  await page.setViewportSize({ width: 1280, height: 800 });
}

describe('web app: habits from Slack and Mattermost', function () {
  this.timeout(120_000);
  const b = suiteBrowser();
  let s: Stack;
  before(async () => {
    s = await level3Stack();
  });

  it('lists the threads one follows in a Threads view, new replies marked; opening one opens the thread and reads it', async () => {
    const ws = await newWorkspace(s);
    const me = (await ws.owner.get('/api/v1/users/me')).body.data as { id: string; name: string };
    const bob = await ws.user({ name: uniqueName('bob') });
    const ch = await channel(ws, 'plans', [bob.id]);
    const mine = await post(ws.owner, ch.id, 'Shall we ship the beta on Friday?');
    await post(bob.client, ch.id, { content: 'Friday works for me', thread_id: mine.id });
    const newest = await post(bob.client, ch.id, { content: 'I will write the notes', thread_id: mine.id });
    const mentioned = await post(bob.client, ch.id, mentioning(me, 'Can you review the budget'));
    await post(bob.client, ch.id, { content: 'numbers are in the sheet', thread_id: mentioned.id });
    const notMine = await post(bob.client, ch.id, 'Lunch order');
    await post(bob.client, ch.id, { content: 'pizza', thread_id: notMine.id });

    const app = await signedIn(b, s.url, ws.ownerKey, `/c/${ch.id}`);
    const page = app.page;
    await page.getByRole('article', { name: /Lunch order/ }).waitFor();
    await sidebar(page).getByRole('button', { name: 'Threads' }).click();
    const view = page.getByRole('complementary', { name: 'Threads' });
    const beta = view.getByRole('button', { name: /Shall we ship the beta on Friday\?.* 2 replies .*2 new replies$/ });
    const budget = view.getByRole('button', { name: /Can you review the budget.* 1 reply .*1 new reply$/ });
    await beta.waitFor();
    await budget.waitFor();
    // Only threads one started, replied to or was mentioned in.
    expect(await view.getByRole('button', { name: /Lunch order/ }).count()).to.equal(0);
    await screenshot(page, 'habits-threads');
    const problems: string[] = [];
    await axeBothWidths(page, 'threads', () => view.waitFor(), problems);

    await beta.click();
    const thread = page.getByRole('complementary', { name: 'Thread' });
    await thread.getByRole('article', { name: /I will write the notes/ }).waitFor();
    await thread.locator(`article[data-message-id="${newest.id}"][aria-current="true"]`).waitFor();
    // Read now: the view says so, and so does the server.
    await sidebar(page).getByRole('button', { name: 'Threads' }).click();
    const readBeta = view.getByRole('button', { name: /Shall we ship the beta on Friday\?/ });
    await readBeta.waitFor();
    await readBeta.locator('.new-replies').waitFor({ state: 'detached' });
    const listed = (await ws.owner.get('/api/v1/threads')).body.data as { root: { id: string }; unread_replies: number }[];
    expect(listed.find((t) => t.root.id === mine.id)?.unread_replies).to.equal(0);
    expect(problems, problems.join('\n')).to.deep.equal([]);
    app.assertClean();
  });

  it('shows all unread messages grouped by conversation, marks one conversation or all read, and opens a message where it lives', async () => {
    const ws = await newWorkspace(s);
    const me = (await ws.owner.get('/api/v1/users/me')).body.data as { id: string; name: string };
    const bob = await ws.user({ name: uniqueName('bob') });
    const here = await channel(ws, 'here', [bob.id]);
    const design = await channel(ws, 'design', [bob.id]);
    const ops = await channel(ws, 'ops', [bob.id]);
    const app = await signedIn(b, s.url, ws.ownerKey, `/c/${here.id}`);
    const page = app.page;
    await page.getByRole('heading', { name: `#${here.name}` }).waitFor();
    await post(bob.client, design.id, 'New logo drafts are up');
    await post(bob.client, design.id, 'Pick one by Monday');
    await post(bob.client, ops.id, mentioning(me, 'The deploy is blocked, can you look'));
    await sidebar(page).getByRole('link', { name: `${ops.name}, 1 unread, 1 mention` }).waitFor();

    await sidebar(page).getByRole('button', { name: /All unreads/ }).click();
    const view = page.getByRole('complementary', { name: 'All unreads' });
    const designGroup = view.getByRole('region', { name: `#${design.name}, 2 unread` });
    const opsGroup = view.getByRole('region', { name: `#${ops.name}, 1 unread, 1 mention` });
    await designGroup.getByRole('button', { name: /New logo drafts are up/ }).waitFor();
    await designGroup.getByRole('button', { name: /Pick one by Monday/ }).waitFor();
    await opsGroup.getByRole('button', { name: /The deploy is blocked/ }).waitFor();
    // Mentions first.
    expect(await view.locator('.unread-group h3').allInnerTexts()).to.deep.equal([`#${ops.name}`, `#${design.name}`]);
    await screenshot(page, 'habits-unreads');
    const problems: string[] = [];
    await axeBothWidths(page, 'unreads', () => designGroup.getByRole('button', { name: /Pick one by Monday/ }).waitFor(), problems);

    await designGroup.getByRole('button', { name: `Mark #${design.name} as read` }).click();
    await designGroup.waitFor({ state: 'detached' });
    await sidebar(page).getByRole('link', { name: design.name, exact: true }).waitFor();
    const designState = (await ws.owner.get(`/api/v1/channels/${design.id}`)).body.data as { unread_count: number };
    expect(designState.unread_count).to.equal(0);

    await opsGroup.getByRole('button', { name: /The deploy is blocked/ }).click();
    await page.getByRole('heading', { name: `#${ops.name}` }).waitFor();
    await page.getByRole('article', { name: /The deploy is blocked/ }).and(page.locator('[aria-current="true"]')).waitFor();
    expect(problems, problems.join('\n')).to.deep.equal([]);
    app.assertClean();
  });

  it('searches with from:, in:, before:, after: and has:file, suggesting people and conversations while they are typed', async () => {
    const ws = await newWorkspace(s);
    const person = async (base: string) => {
      const name = uniqueName(base);
      return { name, ...(await ws.user({ name })) };
    };
    const bob = await person('bob');
    const dan = await person('dan');
    const infra = await channel(ws, 'infra', [bob.id, dan.id]);
    const random = await channel(ws, 'random', [bob.id]);
    const old = await post(bob.client, infra.id, 'report on the old cluster');
    await s.rt.db('messages').where({ id: old.id }).update({ created_at: '2025-06-01T12:00:00Z' });
    await post(bob.client, infra.id, 'report on the new cluster');
    await post(dan.client, infra.id, 'report from dan');
    await post(bob.client, random.id, 'report in random');
    const up = await uploadFile(s.url, { key: bob.key, data: Buffer.from('numbers\n'), name: 'q3.csv', type: 'text/csv' });
    expect(up.status, up.text).to.equal(201);
    const f = up.body.data as { id: string; name: string; size: number; content_type: string };
    await post(bob.client, infra.id, { content: 'Shared a file: q3.csv', metadata: { type: 'axid.file', data: { file_id: f.id, name: f.name, size: f.size, content_type: f.content_type } } });

    const app = await signedIn(b, s.url, ws.ownerKey, `/c/${infra.id}`);
    const page = app.page;
    await page.getByRole('article', { name: /report from dan/ }).waitFor();
    const box = page.getByRole('searchbox', { name: 'Search messages' });
    const suggestions = page.getByRole('listbox', { name: 'Suggestions' });
    await box.click();
    await box.pressSequentially('report from:bo');
    await suggestions.getByRole('option', { name: new RegExp(`@${bob.name}`) }).waitFor();
    expect(await suggestions.getByRole('option', { name: new RegExp(dan.name) }).count()).to.equal(0);
    await screenshot(page, 'habits-search-suggestions');
    const problems: string[] = [];
    await axeBothWidths(page, 'search-suggestions', () => suggestions.waitFor(), problems);
    await box.press('Enter');
    expect(await box.inputValue()).to.equal(`report from:@${bob.name} `);
    await box.pressSequentially('in:inf');
    await suggestions.getByRole('option', { name: `#${infra.name}` }).waitFor();
    await box.press('ArrowDown');
    await box.press('Enter');
    expect(await box.inputValue()).to.equal(`report from:@${bob.name} in:#${infra.name} `);
    await box.press('Enter');
    const results = page.getByRole('complementary', { name: 'Search results' });
    const found = async () => (await results.locator('.snippet').allInnerTexts()).sort();
    await results.getByRole('button', { name: /report on the new cluster/ }).waitFor();
    expect(await found()).to.deep.equal(['report on the new cluster', 'report on the old cluster']);

    const searchFor = async (q: string, expected: string[]) => {
      // A space at the end: the filter is finished, so Enter searches rather than picks a suggestion.
      await box.fill(`${q} `);
      await box.press('Enter');
      await results.getByRole('heading', { name: `Results for “${q}”` }).waitFor();
      await results.locator('.snippet').first().waitFor();
      expect(await found(), q).to.deep.equal([...expected].sort());
    };
    await searchFor(`report from:@${bob.name} before:2025-12-31`, ['report on the old cluster']);
    await searchFor(`report from:@${bob.name} after:2025-12-31`, ['report on the new cluster', 'report in random']);
    // A filter alone, no words.
    await searchFor(`has:file in:#${infra.name}`, ['Shared a file: q3.csv']);
    expect(problems, problems.join('\n')).to.deep.equal([]);
    app.assertClean();
  });

  it('edits one\'s last message with Up in an empty composer, moves between conversations with Alt+arrows, and shows the shortcuts on ? and Ctrl+/', async () => {
    const ws = await newWorkspace(s);
    const bob = await ws.user({ name: uniqueName('bob') });
    const first = await channel(ws, 'a-first', [bob.id]);
    const second = await channel(ws, 'a-second', [bob.id]);
    const third = await channel(ws, 'a-third', [bob.id]);
    await post(ws.owner, first.id, 'an older one of mine');
    await post(bob.client, first.id, 'from bob');
    const app = await signedIn(b, s.url, ws.ownerKey, `/c/${first.id}`);
    const page = app.page;
    const composer = page.getByRole('textbox', { name: `Message #${first.name}` });
    await composer.pressSequentially('Deploy at 5pm');
    await composer.press('Enter');
    await page.locator('article.message[data-state="sent"]', { hasText: 'Deploy at 5pm' }).waitFor();

    // Up in the empty composer: the last message of mine (not Bob's) opens for editing, Enter saves, the caret comes back.
    await composer.press('ArrowUp');
    const edit = page.getByRole('textbox', { name: 'Edit message' });
    await edit.waitFor();
    expect(await edit.inputValue()).to.equal('Deploy at 5pm');
    expect(await edit.evaluate((el) => el === document.activeElement)).to.equal(true);
    await edit.press('End');
    await edit.pressSequentially(' sharp');
    await edit.press('Enter');
    await page.getByRole('article', { name: /Deploy at 5pm sharp/ }).getByText('(edited)').waitFor();
    expect(await composer.evaluate((el) => el === document.activeElement)).to.equal(true);
    // With text in it, Up is the caret's.
    await composer.pressSequentially('draft');
    await composer.press('ArrowUp');
    expect(await edit.count()).to.equal(0);
    await composer.fill('');

    // Alt+↓ / Alt+↑: the conversation below / above in the sidebar.
    const order = await sidebar(page).locator('a.conv .name').allInnerTexts();
    const below = (name: string, step: number) => order[(order.indexOf(name) + step + order.length) % order.length]!;
    await page.keyboard.press('Alt+ArrowDown');
    await page.getByRole('heading', { name: `#${below(first.name, 1)}` }).waitFor();
    await page.keyboard.press('Alt+ArrowUp');
    await page.getByRole('heading', { name: `#${first.name}` }).waitFor();
    // Alt+Shift+↓: the next unread one, past those read.
    await post(bob.client, third.id, 'news in the third');
    await sidebar(page).getByRole('link', { name: `${third.name}, 1 unread` }).waitFor();
    expect(order.indexOf(third.name)).to.be.greaterThan(order.indexOf(second.name));
    await page.keyboard.press('Alt+Shift+ArrowDown');
    await page.getByRole('heading', { name: `#${third.name}` }).waitFor();

    // ? outside a text field opens the help; in the composer it is a character; Ctrl+/ works there.
    const thirdComposer = page.getByRole('textbox', { name: `Message #${third.name}` });
    await thirdComposer.pressSequentially('why?');
    expect(await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).count()).to.equal(0);
    expect(await thirdComposer.inputValue()).to.equal('why?');
    await thirdComposer.press('Control+/');
    const help = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await help.getByRole('cell', { name: 'In an empty message box: edit your last message' }).waitFor();
    await screenshot(page, 'habits-shortcuts');
    const problems: string[] = [];
    await axeBothWidths(page, 'shortcuts', () => help.waitFor(), problems);
    await page.keyboard.press('Escape');
    await help.waitFor({ state: 'detached' });
    await page.getByRole('heading', { name: `#${third.name}` }).click();
    await page.keyboard.press('?');
    await help.waitFor();
    expect(problems, problems.join('\n')).to.deep.equal([]);
    app.assertClean();
  });
});
