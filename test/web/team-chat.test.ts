// The web app's team chat (issue 34, level 3 APIs of docs/team-chat.md),
// used as a person would: @here, @channel and group handles picked in the
// composer; user groups and custom emoji in the settings; pins from the
// message toolbar and the pins panel; Browse channels with join, archive and
// unarchive, an archived channel read-only. Found by role and accessible name.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import sharp from 'sharp';
import type { Stack } from '../../services/stack.js';
import { level3Stack, newWorkspace, uniqueName } from '../support/stack.js';
import { axeProblems, screenshot, signedIn, suiteBrowser } from './browser.js';
import { channelWith, post } from './seed.js';

const article = (page: Page, text: string) => page.getByRole('article', { name: new RegExp(`: ${text}$`) });

/** A small face on a coloured disc, as a PNG the worker can store. */
const facePng = () =>
  sharp(
    Buffer.from(
      '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><circle cx="32" cy="32" r="30" fill="#f59e0b"/><circle cx="22" cy="26" r="5" fill="#1f2937"/><circle cx="42" cy="26" r="5" fill="#1f2937"/><path d="M18 40 Q32 54 46 40" stroke="#1f2937" stroke-width="4" fill="none"/></svg>',
    ),
  )
    .png()
    .toBuffer();

async function addEmoji(s: Stack, key: string, name: string) {
  const form = new FormData();
  form.append('name', name);
  form.append('image', new Blob([new Uint8Array(await facePng())], { type: 'image/png' }), `${name}.png`);
  const res = await fetch(`${s.url}/api/v1/emoji`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  expect(res.status).to.equal(201);
}

describe('web app: team chat (level 3)', function () {
  this.timeout(120_000);
  const b = suiteBrowser();
  let s: Stack;
  before(async () => {
    s = await level3Stack();
  });

  it('offers @here, @channel and group handles in the mention list, and sends them so the server mentions the group', async () => {
    const ws = await newWorkspace(s);
    const bob = await ws.user({ name: uniqueName('bob') });
    const handle = `backend-${Date.now().toString(36)}`;
    const group = (await ws.owner.post('/api/v1/user-groups', { handle, name: 'Backend team', member_ids: [bob.id] })).body.data as { id: string };
    const ch = await channelWith(ws, [bob.id]);
    const app = await signedIn(b, s.url, ws.ownerKey, `/c/${ch.id}`);
    const page = app.page;
    const box = page.getByRole('textbox', { name: `Message #${ch.name}` });
    await box.click();
    await box.pressSequentially('Deploy at noon, @back');
    const list = page.getByRole('listbox', { name: 'Mention someone' });
    await list.getByRole('option', { name: new RegExp(`@${handle} Backend team, 1 member`) }).waitFor();
    await screenshot(page, 'mention-group');
    await box.press('Enter');
    await box.pressSequentially('and @cha');
    await list.getByRole('option', { name: /@channel/ }).waitFor();
    await box.pressSequentially('nnel and @he');
    await list.getByRole('option', { name: /@here Notify everyone here who is online/ }).click();
    expect(await box.inputValue()).to.equal(`Deploy at noon, @${handle} and @channel and @here `);
    await box.press('Enter');
    // Sent (the POST answered), not only drawn as pending.
    await page.locator('article[data-state="sent"]', { hasText: `Deploy at noon, @${handle} and @channel and @here` }).waitFor();
    // The server read them from the content: the group (so Bob), @channel and @here.
    const messages = (await ws.owner.get(`/api/v1/channels/${ch.id}/messages`)).body.data as { content: string; mentioned_group_ids: string[]; mentioned_user_ids: string[] }[];
    const sent = messages.find((m) => m.content.startsWith('Deploy at noon'))!;
    expect(sent.mentioned_group_ids).to.deep.equal([group.id, 'channel', 'here']);
    expect(sent.mentioned_user_ids).to.include(bob.id);
    app.assertClean();
  });

  it('lists, creates, edits, sets the members of and deletes user groups in the settings (owners and admins only)', async () => {
    const ws = await newWorkspace(s);
    const bobName = uniqueName('bob');
    const carolName = uniqueName('carol');
    const bob = await ws.user({ name: bobName });
    const carol = await ws.user({ name: carolName });
    const app = await signedIn(b, s.url, ws.ownerKey, '/settings');
    const page = app.page;
    page.on('dialog', (d) => void d.accept());
    await page.getByRole('tab', { name: 'User groups' }).click();
    await page.getByText('No groups yet.').waitFor();
    await page.getByRole('button', { name: 'New group' }).click();
    const form = page.getByRole('form', { name: 'New group' });
    // The handle is checked as the API checks it, before anything is sent.
    await form.getByRole('textbox', { name: /Handle/ }).fill('here');
    await form.getByRole('button', { name: 'Create group' }).click();
    await form.getByText('@here is a mention of its own: pick another handle.').waitFor();
    const handle = `design-${Date.now().toString(36)}`;
    await form.getByRole('textbox', { name: /Handle/ }).fill(handle);
    await form.getByRole('textbox', { name: 'Name', exact: true }).fill('Design');
    await form.getByRole('textbox', { name: 'Description' }).fill('Everyone who draws the screens');
    await form.getByRole('checkbox', { name: new RegExp(bobName) }).check();
    await screenshot(page, 'user-group-form');
    await form.getByRole('button', { name: 'Create group' }).click();
    const groups = page.getByRole('list', { name: 'User groups' });
    await groups.getByText(`@${handle}`).waitFor();
    let listed = (await ws.owner.get('/api/v1/user-groups')).body.data as { id: string; handle: string; name: string; member_ids: string[] }[];
    expect(listed.map((g) => [g.handle, g.name, g.member_ids])).to.deep.equal([[handle, 'Design', [bob.id]]]);

    // A member sees the group, and no way to change it.
    const member = await signedIn(b, s.url, carol.key, '/settings');
    await member.page.getByRole('tab', { name: 'User groups' }).click();
    await member.page.getByRole('list', { name: 'User groups' }).getByText(`@${handle}`).waitFor();
    expect(await member.page.getByRole('button', { name: 'New group' }).count()).to.equal(0);
    expect(await member.page.getByRole('button', { name: `Edit @${handle}` }).count()).to.equal(0);

    // Renamed, and Carol in Bob's place.
    await page.getByRole('button', { name: `Edit @${handle}` }).click();
    const edit = page.getByRole('form', { name: `Edit @${handle}` });
    await edit.getByRole('textbox', { name: /Handle/ }).fill(`${handle}-team`);
    await edit.getByRole('checkbox', { name: new RegExp(bobName) }).uncheck();
    await edit.getByRole('checkbox', { name: new RegExp(carolName) }).check();
    await edit.getByRole('button', { name: 'Save' }).click();
    await groups.getByText(`@${handle}-team`).waitFor();
    listed = (await ws.owner.get('/api/v1/user-groups')).body.data;
    expect(listed.map((g) => [g.handle, g.member_ids])).to.deep.equal([[`${handle}-team`, [carol.id]]]);
    // The member's page follows by the group's event.
    await member.page.getByRole('list', { name: 'User groups' }).getByText(`@${handle}-team`).waitFor();
    await screenshot(page, 'user-groups');

    // A handle a person has is refused by the API: said in plain words.
    await page.getByRole('button', { name: `Edit @${handle}-team` }).click();
    await page.getByRole('textbox', { name: /Handle/ }).fill(bobName.toLowerCase());
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('alert').filter({ hasText: 'That name is already taken' }).waitFor();
    await page.getByRole('button', { name: 'Cancel' }).click();

    await page.getByRole('button', { name: `Delete @${handle}-team` }).click();
    await page.getByText('No groups yet.').waitFor();
    expect((await ws.owner.get('/api/v1/user-groups')).body.data).to.deep.equal([]);
    await member.page.getByText('No groups yet.').waitFor();
    app.assertClean();
    member.assertClean();
  });

  it('pins from the message toolbar, marks the message, lists pins in a panel that follows events, and opens a pin where it lives', async () => {
    const ws = await newWorkspace(s);
    const bob = await ws.user({ name: uniqueName('bob') });
    const ch = await channelWith(ws, [bob.id]);
    for (let i = 1; i <= 30; i++) await post(ws, ch.id, `note number ${i}`);
    const app = await signedIn(b, s.url, ws.ownerKey, `/c/${ch.id}`);
    const page = app.page;
    const bobApp = await signedIn(b, s.url, bob.key, `/c/${ch.id}`);
    await article(page, 'note number 30').waitFor();
    await article(bobApp.page, 'note number 30').waitFor();
    // Bob's pins panel is open while the owner pins.
    await bobApp.page.getByRole('button', { name: 'Pins' }).click();
    const bobPanel = bobApp.page.getByRole('complementary', { name: 'Pinned messages' });
    await bobPanel.getByText('Nothing is pinned here yet.', { exact: false }).waitFor();

    const target = article(page, 'note number 29');
    await target.hover();
    await target.getByRole('button', { name: 'Pin message' }).click();
    await target.getByText(/Pinned by/).waitFor();
    await target.getByRole('button', { name: 'Unpin message' }).waitFor({ state: 'attached' });
    // Live, for Bob: the mark on the message and the panel.
    await article(bobApp.page, 'note number 29').getByText(/Pinned by/).waitFor();
    await bobPanel.getByRole('button', { name: /note number 29/ }).waitFor();
    const pins = (await ws.owner.get(`/api/v1/channels/${ch.id}/pins`)).body.data as { content: string }[];
    expect(pins.map((m) => m.content)).to.deep.equal(['note number 29']);

    // A pin far up the list (loaded by the API now, not on screen): the panel opens it where it lives.
    const old = (await ws.owner.get(`/api/v1/channels/${ch.id}/messages?limit=50`)).body.data.find((m: { content: string }) => m.content === 'note number 2') as { id: string };
    expect((await bob.client.post(`/api/v1/channels/${ch.id}/pins`, { message_id: old.id })).status).to.equal(201);
    await page.getByRole('button', { name: 'Pins' }).click();
    const panel = page.getByRole('complementary', { name: 'Pinned messages' });
    await panel.getByRole('button', { name: /note number 2$/ }).waitFor();
    expect(await panel.locator('.pin-text').allTextContents()).to.deep.equal(['note number 2', 'note number 29']);
    await screenshot(page, 'pins-panel');
    await panel.getByRole('button', { name: /note number 2$/ }).click();
    await page.locator('article[aria-current="true"]', { hasText: 'note number 2' }).waitFor();
    expect(new URL(page.url()).pathname).to.equal(`/c/${ch.id}/m/${old.id}`);

    // Unpinned from the panel (still open): gone for both, the mark too.
    await panel.getByRole('button', { name: /Unpin the message of/ }).last().click();
    await panel.locator('.pin-text').filter({ hasText: 'note number 29' }).waitFor({ state: 'detached' });
    await bobPanel.getByRole('button', { name: /note number 29/ }).waitFor({ state: 'detached' });
    await article(bobApp.page, 'note number 29').getByText(/Pinned by/).waitFor({ state: 'detached' });
    expect(((await ws.owner.get(`/api/v1/channels/${ch.id}/pins`)).body.data as { content: string }[]).map((m) => m.content)).to.deep.equal(['note number 2']);
    app.assertClean();
    bobApp.assertClean();
  });

  it('browses channels (archived ones marked), joins one, archives and unarchives; an archived channel is read-only', async () => {
    const ws = await newWorkspace(s);
    const bob = await ws.user({ name: uniqueName('bob') });
    const mine = await channelWith(ws, [bob.id]);
    await post(ws, mine.id, 'before the archive');
    const bobs = (await bob.client.post('/api/v1/channels', { name: uniqueName('bobs') })).body.data as { id: string; name: string };
    const old = await channelWith(ws);
    expect((await ws.owner.post(`/api/v1/channels/${old.id}/archive`)).status).to.equal(200);
    const app = await signedIn(b, s.url, ws.ownerKey, `/c/${mine.id}`);
    const page = app.page;
    await article(page, 'before the archive').waitFor();

    await page.getByRole('button', { name: 'Browse channels' }).click();
    const dialog = page.getByRole('dialog', { name: 'Browse channels' });
    const row = (name: string) => dialog.getByRole('listitem').filter({ hasText: name });
    await row(old.name).getByText('archived').waitFor();
    await row(bobs.name).getByText('1 member').waitFor();
    await screenshot(page, 'browse-channels');
    // The filter narrows the list; Join opens the channel with its composer.
    await dialog.getByRole('searchbox', { name: 'Filter channels' }).fill(bobs.name);
    expect(await dialog.getByRole('listitem').count()).to.equal(1);
    await dialog.getByRole('button', { name: `Join #${bobs.name}` }).click();
    await page.getByRole('heading', { name: `#${bobs.name}` }).waitFor();
    await page.getByRole('textbox', { name: `Message #${bobs.name}` }).waitFor();

    // Archived from the dialog (the owner may): the channel turns read-only.
    await page.getByRole('button', { name: 'Browse channels' }).click();
    await dialog.getByRole('button', { name: `Archive #${mine.name}` }).click();
    await row(mine.name).getByText('archived').waitFor();
    await dialog.getByRole('button', { name: `Open #${mine.name}` }).click();
    await page.getByRole('heading', { name: `#${mine.name}` }).waitFor();
    const notice = page.getByRole('status').filter({ hasText: 'This channel was archived' });
    await notice.waitFor();
    expect(await page.getByRole('textbox', { name: `Message #${mine.name}` }).count()).to.equal(0);
    const msg = article(page, 'before the archive');
    await msg.hover();
    await msg.getByRole('button', { name: 'Copy link' }).waitFor();
    for (const name of ['Add reaction', 'Reply in thread', 'Pin message', 'Edit message', 'Delete message']) expect(await msg.getByRole('button', { name }).count(), name).to.equal(0);
    expect(await page.getByRole('button', { name: 'Leave' }).count()).to.equal(0);
    await screenshot(page, 'archived-channel');

    // Bob, a member who neither made it nor administers: no Archive offered for it, and the notice for him too (event).
    const bobApp = await signedIn(b, s.url, bob.key, `/c/${mine.id}`);
    await bobApp.page.getByRole('status').filter({ hasText: 'This channel was archived' }).waitFor();
    expect(await bobApp.page.getByRole('status').filter({ hasText: 'This channel was archived' }).getByRole('button', { name: 'Unarchive' }).count()).to.equal(0);
    await bobApp.page.getByRole('button', { name: 'Browse channels' }).click();
    const bobDialog = bobApp.page.getByRole('dialog', { name: 'Browse channels' });
    await bobDialog.getByRole('listitem').filter({ hasText: old.name }).waitFor();
    expect(await bobDialog.getByRole('button', { name: `Unarchive #${mine.name}` }).count()).to.equal(0);
    await bobDialog.getByRole('button', { name: `Archive #${bobs.name}` }).waitFor();
    await bobApp.page.keyboard.press('Escape');

    // Unarchived from the notice: the composer is back, for Bob too.
    await notice.getByRole('button', { name: 'Unarchive' }).click();
    await page.getByRole('textbox', { name: `Message #${mine.name}` }).waitFor();
    await bobApp.page.getByRole('textbox', { name: `Message #${mine.name}` }).waitFor();
    const channel = (await ws.owner.get(`/api/v1/channels/${mine.id}`)).body.data as { archived_at: string | null };
    expect(channel.archived_at).to.equal(null);
    app.assertClean();
    bobApp.assertClean();
  });

  it('adds custom emoji in the settings, offers them in the picker, and draws :name: in messages and reactions as the image', async () => {
    const ws = await newWorkspace(s);
    const ch = await channelWith(ws);
    const name = `party_${Date.now().toString(36)}`;
    const app = await signedIn(b, s.url, ws.ownerKey, '/settings');
    const page = app.page;
    page.on('dialog', (d) => void d.accept());
    await page.getByRole('tab', { name: 'Custom emoji' }).click();
    await page.getByText('No custom emoji yet.').waitFor();
    const form = page.getByRole('form', { name: 'Add a custom emoji' });
    await form.getByLabel('Image').setInputFiles({ name: 'face.png', mimeType: 'image/png', buffer: await facePng() });
    // The file's name is offered as the emoji's.
    expect(await form.getByRole('textbox', { name: 'Name' }).inputValue()).to.equal('face');
    await form.getByRole('textbox', { name: 'Name' }).fill(name);
    await form.getByRole('button', { name: 'Add emoji' }).click();
    // Shown once the worker has stored it.
    const image = page.getByRole('table').getByRole('img', { name: `:${name}:` });
    await image.waitFor();
    expect(await image.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).to.equal(true);
    await screenshot(page, 'custom-emoji-settings');
    // A text file named .png is refused, in plain words.
    await form.getByLabel('Image').setInputFiles({ name: 'fake.png', mimeType: 'image/png', buffer: Buffer.from('not an image') });
    await form.getByRole('textbox', { name: 'Name' }).fill('fake');
    await form.getByRole('button', { name: 'Add emoji' }).click();
    await form.getByRole('alert').filter({ hasText: "That kind of file can't be uploaded here." }).waitFor();

    // In a message and in the picker.
    await post(ws, ch.id, `ship it :${name}: now`);
    await page.goto(`/c/${ch.id}`);
    const msg = article(page, `ship it :${name}: now`);
    await msg.getByRole('img', { name: `:${name}:` }).waitFor();
    await page.getByRole('button', { name: 'Insert emoji' }).click();
    const picker = page.getByRole('dialog', { name: 'Emoji' });
    await picker.getByRole('region', { name: 'Custom' }).getByRole('button', { name }).waitFor();
    await screenshot(page, 'custom-emoji-picker');
    await picker.getByRole('searchbox', { name: 'Search emoji' }).fill(name.slice(0, 8));
    await picker.getByRole('button', { name }).click();
    const box = page.getByRole('textbox', { name: `Message #${ch.name}` });
    expect(await box.inputValue()).to.equal(`:${name}:`);
    // As a reaction, from the message's picker.
    await msg.hover();
    await msg.getByRole('button', { name: 'Add reaction' }).click();
    await picker.getByRole('region', { name: 'Custom' }).getByRole('button', { name }).click();
    await msg.locator('.reaction').getByRole('img', { name: `:${name}:` }).waitFor();
    const reactions = (await ws.owner.get(`/api/v1/channels/${ch.id}/messages`)).body.data[0].reactions as { emoji: string }[];
    expect(reactions.map((r) => r.emoji)).to.deep.equal([name]);

    // Deleted in the settings: gone from the list.
    await page.goto('/settings');
    await page.getByRole('tab', { name: 'Custom emoji' }).click();
    await page.getByRole('button', { name: `Delete :${name}:` }).click();
    await page.getByText('No custom emoji yet.').waitFor();
    expect((await ws.owner.get('/api/v1/emoji')).body.data).to.deep.equal([]);
    app.assertClean();
  });

  it('passes an axe-core check of each new screen at desktop and phone width', async () => {
    const ws = await newWorkspace(s);
    const bob = await ws.user({ name: uniqueName('bob') });
    await ws.owner.post('/api/v1/user-groups', { handle: `ops-${Date.now().toString(36)}`, name: 'Operations', description: 'On call this week', member_ids: [bob.id, ws.ownerId] });
    const emojiName = `yay_${Date.now().toString(36)}`;
    await addEmoji(s, ws.ownerKey, emojiName);
    const ch = await channelWith(ws, [bob.id], { description: 'Where the team talks' });
    const first = await post(ws, ch.id, `Release notes are out :${emojiName}:`);
    await post(ws, ch.id, 'Standup moved to 10:00');
    await ws.owner.post(`/api/v1/channels/${ch.id}/pins`, { message_id: first.id });
    await ws.owner.post(`/api/v1/channels/${ch.id}/messages/${first.id}/reactions`, { emoji: emojiName });
    const old = await channelWith(ws, [], { description: 'Last quarter' });
    await post(ws, old.id, 'All done here');
    await ws.owner.post(`/api/v1/channels/${old.id}/archive`);
    await (await bob.client.post('/api/v1/channels', { name: uniqueName('random') })).body;
    const problems: string[] = [];
    for (const [viewport, scheme, tag] of [
      [{ width: 1280, height: 800 }, 'light', 'desktop'],
      [{ width: 390, height: 844 }, 'dark', 'phone-dark'],
    ] as const) {
      const app = await signedIn(b, s.url, ws.ownerKey, `/c/${ch.id}`, viewport, scheme);
      const page = app.page;
      const check = async (screen: string) => {
        for (const p of await axeProblems(page)) problems.push(`${tag} ${screen}: ${p}`);
        await screenshot(page, `team-${screen}-${tag}`);
      };
      // The pinned message with its custom emoji (the image loaded) and its reaction.
      await article(page, 'Standup moved to 10:00').waitFor();
      await article(page, `Release notes are out :${emojiName}:`).getByRole('img', { name: `:${emojiName}:` }).first().waitFor();
      await check('channel');
      const box = page.getByRole('textbox', { name: `Message #${ch.name}` });
      await box.click();
      await box.pressSequentially('@');
      await page.getByRole('listbox', { name: 'Mention someone' }).getByRole('option', { name: /@here/ }).waitFor();
      await check('mentions');
      await box.press('Escape');
      await box.fill('');
      await page.getByRole('button', { name: 'Pins' }).click();
      await page.getByRole('complementary', { name: 'Pinned messages' }).getByRole('button', { name: /Release notes/ }).waitFor();
      await check('pins');
      await page.getByRole('button', { name: 'Close pinned messages' }).click();
      await page.getByRole('button', { name: 'Insert emoji' }).click();
      await page.getByRole('dialog', { name: 'Emoji' }).getByRole('region', { name: 'Custom' }).getByRole('button', { name: emojiName }).waitFor();
      await check('emoji-picker');
      await page.keyboard.press('Escape');
      if (tag !== 'desktop') await page.getByRole('button', { name: 'Show conversations' }).click();
      await page.getByRole('button', { name: 'Browse channels' }).click();
      const dialog = page.getByRole('dialog', { name: 'Browse channels' });
      await dialog.getByRole('listitem').filter({ hasText: old.name }).getByText('archived').waitFor();
      await check('browse');
      await dialog.getByRole('button', { name: `Open #${old.name}` }).click();
      await page.getByRole('status').filter({ hasText: 'This channel was archived' }).waitFor();
      await check('archived');
      await page.goto('/settings');
      await page.getByRole('tab', { name: 'User groups' }).click();
      await page.getByRole('list', { name: 'User groups' }).getByText('Operations').waitFor();
      await check('groups');
      await page.getByRole('button', { name: /^Edit @ops-/ }).click();
      await page.getByRole('form', { name: /^Edit @ops-/ }).waitFor();
      await check('group-form');
      await page.getByRole('tab', { name: 'Custom emoji' }).click();
      await page.getByRole('table').getByRole('img', { name: `:${emojiName}:` }).waitFor();
      await check('emoji-settings');
      app.assertClean();
    }
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });
});
