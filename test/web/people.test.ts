// The web app, round two (issue 24): people and their day. Notifications
// (asked on a click; mentions and DMs; none for one's own message or a muted
// conversation), profile and avatar seen live by the other person, a group DM
// of three, a channel renamed, and an axe-core check of each main screen.
// Found by role and accessible name, two people and a bot.
import { expect } from 'chai';
import { uploadFile } from '../support/files.js';
import { newWorkspace, stack, uniqueName } from '../support/stack.js';
import { axeProblems, screenshot, signedIn, suiteBrowser } from './browser.js';
import { channelWith } from './seed.js';

const mention = (text: string, user: { id: string; name: string }) => ({
  content: `${text} @${user.name}`,
  content_json: { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: `${text} ` }, { type: 'mention', attrs: { id: user.id, label: user.name } }] }] },
});

describe('web app: people, notifications and accessibility', function () {
  this.timeout(120_000);
  const b = suiteBrowser();

  it('notifies of a mention and a DM, never of our own message or a muted conversation; the sidebar says "2 unread, 1 mention"', async () => {
    const ws = await newWorkspace();
    const me = (await ws.owner.get('/api/v1/users/me')).body.data as { id: string; name: string };
    const bob = await ws.user({ name: uniqueName('bob') });
    const open = await channelWith(ws, [bob.id]);
    const other = await channelWith(ws, [bob.id]);
    const app = await signedIn(b, stack().url, ws.ownerKey, `/c/${open.id}`);
    const page = app.page;
    await app.context.grantPermissions(['notifications'], { origin: stack().url });
    // Every notification the page creates is recorded (the browser's own stays real).
    await page.addInitScript(() => {
      const w = window as unknown as { __notes: string[]; Notification: typeof Notification };
      w.__notes = [];
      const Real = w.Notification;
      w.Notification = new Proxy(Real, {
        construct(target, args: [string, NotificationOptions?]) {
          w.__notes.push(`${args[0]} | ${args[1]?.body ?? ''}`);
          return Reflect.construct(target, args);
        },
      });
    });
    await page.reload();
    const notes = () => page.evaluate(() => (window as unknown as { __notes: string[] }).__notes);

    // Asked on a click, in the settings, never on load.
    expect(await page.evaluate(() => localStorage.getItem('axid.notifications'))).to.equal(null);
    await page.getByRole('button', { name: 'Settings', exact: true }).click();
    await page.getByRole('tab', { name: 'Preferences' }).click();
    await page.getByRole('button', { name: 'Turn on desktop notifications' }).click();
    await page.getByRole('button', { name: 'Turn off desktop notifications' }).waitFor();
    await page.getByRole('button', { name: '← Back to chat' }).click();
    await page.getByRole('link', { name: new RegExp(open.name) }).click();

    const sidebar = page.getByRole('navigation', { name: 'Conversations' });
    await bob.client.post(`/api/v1/channels/${other.id}/messages`, mention('look here', me));
    await bob.client.post(`/api/v1/channels/${other.id}/messages`, { content: 'just chatting' });
    await sidebar.getByRole('link', { name: `${other.name}, 2 unread, 1 mention` }).waitFor();
    // The tab title follows the counts (set by an effect after the sidebar renders).
    await page.waitForFunction(() => document.title.startsWith('(2) '));
    // Our own message, and Bob's plain message in the open channel: nothing.
    const composer = page.getByLabel(`Message #${open.name}`);
    await composer.fill('my own words');
    await composer.press('Enter');
    await bob.client.post(`/api/v1/channels/${open.id}/messages`, { content: 'plain in the open channel' });
    await page.getByRole('article', { name: /plain in the open channel/ }).waitFor();
    const first = await notes();
    expect(first).to.have.length(1);
    expect(first[0]).to.match(new RegExp(`in #${other.name} \\| look here`));

    // Muted: the conversation is quiet, but a mention of me there still notifies (as in Slack); so does a DM.
    await sidebar.getByRole('link', { name: new RegExp(other.name) }).click();
    await page.getByRole('button', { name: 'Mute' }).click();
    await page.getByRole('button', { name: 'Muted' }).waitFor();
    await sidebar.getByRole('link', { name: new RegExp(open.name) }).click();
    await bob.client.post(`/api/v1/channels/${other.id}/messages`, { content: 'plain in the muted channel' });
    await bob.client.post(`/api/v1/channels/${other.id}/messages`, mention('muted mention', me));
    await sidebar.getByRole('link', { name: `${other.name}, 2 unread, 1 mention, muted` }).waitFor();
    const dm = await bob.client.post('/api/v1/dms', { user_ids: [me.id] });
    await bob.client.post(`/api/v1/dms/${dm.body.data.id}/messages`, { content: 'a direct word' });
    await page.waitForFunction(() => (window as unknown as { __notes: string[] }).__notes.length >= 3);
    const all = await notes();
    expect(all).to.have.length(3);
    expect(all[1]).to.match(/\| muted mention @/);
    expect(all[2]).to.match(/\| a direct word$/);
    app.assertClean();
  });

  it('shows a profile and avatar change live to the other person; starts a group DM of three; renames a channel', async () => {
    const ws = await newWorkspace();
    const bobName = uniqueName('bob');
    const carolName = uniqueName('carol');
    const bob = await ws.user({ name: bobName });
    const carol = await ws.user({ name: carolName });
    const bot = await ws.user({ name: uniqueName('helper'), is_agent: true });
    const ch = await channelWith(ws, [bob.id, bot.id]);
    await ws.owner.post(`/api/v1/channels/${ch.id}/messages`, { content: 'hello from the owner' });
    await bot.client.post(`/api/v1/channels/${ch.id}/messages`, { content: 'hello from the bot' });
    const alice = await signedIn(b, stack().url, ws.ownerKey, `/c/${ch.id}`);
    const bobApp = await signedIn(b, stack().url, bob.key, `/c/${ch.id}`);
    await bobApp.page.getByRole('article', { name: /hello from the owner/ }).waitFor();

    // Profile: display name and an uploaded picture.
    const page = alice.page;
    await page.getByRole('button', { name: /^Your profile: / }).click();
    const profile = page.getByRole('dialog', { name: 'Your profile' });
    await profile.getByLabel('Display name').fill('Alice Liddell');
    await profile.getByRole('button', { name: 'Save name' }).click();
    await profile.getByRole('status').getByText('Display name saved.').waitFor();
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVQI12P8z8DAwMDAxMDAwMDAAAANHQEDK+mmyAAAAABJRU5ErkJggg==', 'base64');
    await profile.getByLabel('Upload a picture').setInputFiles({ name: 'me.png', mimeType: 'image/png', buffer: png });
    await profile.getByRole('status').getByText('Picture saved.').waitFor();
    await screenshot(page, 'profile');
    await page.keyboard.press('Escape');
    // Bob sees both without reloading: the name on her message, her picture as its avatar.
    const hers = bobApp.page.getByRole('article', { name: /^Alice Liddell: hello from the owner/ });
    await hers.waitFor();
    await bobApp.page.waitForFunction(
      (text) => [...document.querySelectorAll('article')].some((a) => a.textContent?.includes(text) && [...a.querySelectorAll('img')].some((i) => i.complete && i.naturalWidth === 2)),
      'hello from the owner',
    );

    // A group DM of three from "New message".
    await page.getByRole('button', { name: 'New message' }).click();
    const dialog = page.getByRole('dialog', { name: 'New message' });
    await dialog.getByRole('checkbox', { name: new RegExp(bobName) }).check();
    await dialog.getByRole('checkbox', { name: new RegExp(carolName) }).check();
    await dialog.getByRole('button', { name: 'Start a group message (3 people)' }).click();
    const composer = page.getByRole('textbox', { name: new RegExp(`^Message .*${bobName}`) });
    await composer.fill('all three of us');
    await composer.press('Enter');
    const carolApp = await signedIn(b, stack().url, carol.key);
    await carolApp.page.getByRole('navigation', { name: 'Conversations' }).getByRole('link', { name: new RegExp(bobName) }).click();
    await carolApp.page.getByRole('article', { name: /^Alice Liddell: all three of us/ }).waitFor();

    // Rename the channel: the reason shows while the name is refused; Bob sees the new name live.
    await page.getByRole('navigation', { name: 'Conversations' }).getByRole('link', { name: new RegExp(ch.name) }).click();
    await page.getByRole('button', { name: 'Channel settings' }).click();
    const settings = page.getByRole('dialog', { name: 'Channel settings' });
    await settings.getByLabel('Name').fill('   ');
    await settings.getByText('A channel needs a name (not only spaces).').waitFor();
    expect(await settings.getByRole('button', { name: 'Save' }).isDisabled()).to.equal(true);
    const renamed = uniqueName('renamed');
    await settings.getByLabel('Name').fill(renamed);
    await settings.getByLabel('Description').fill('where the work happens');
    await settings.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('heading', { name: `#${renamed}` }).waitFor();
    await bobApp.page.getByRole('heading', { name: `#${renamed}` }).waitFor();
    await bobApp.page.getByText('where the work happens').waitFor();
    await bobApp.page.getByRole('article', { name: /hello from the bot/ }).getByText('bot', { exact: true }).waitFor();
    await screenshot(bobApp.page, 'renamed-channel');
    for (const a of [alice, bobApp, carolApp]) a.assertClean();
  });

  it('passes an axe-core check of each main screen, desktop and phone, light and dark', async () => {
    const ws = await newWorkspace();
    const bob = await ws.user({ name: uniqueName('bob') });
    const ch = await channelWith(ws, [bob.id]);
    const root = await bob.client.post(`/api/v1/channels/${ch.id}/messages`, { content: 'A **bold** start with `code` :tada:\n\n```\nnpm test\n```' });
    await bob.client.post(`/api/v1/channels/${ch.id}/messages`, { content: 'in the thread', thread_id: root.body.data.id });
    await ws.owner.post(`/api/v1/channels/${ch.id}/messages`, { content: 'and a reply' });
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVQI12P8z8DAwMDAxMDAwMDAAAANHQEDK+mmyAAAAABJRU5ErkJggg==', 'base64');
    const file = await uploadFile(stack().url, { key: ws.ownerKey, data: png, name: 'dot.png', type: 'image/png' });
    const f = file.body.data;
    await ws.owner.post(`/api/v1/channels/${ch.id}/messages`, {
      content: 'Shared a file: dot.png',
      metadata: { type: 'axid.file', data: { file_id: f.id, name: f.name, size: f.size, content_type: f.content_type } },
    });
    const problems: string[] = [];
    for (const [viewport, scheme, tag] of [
      [{ width: 1280, height: 800 }, 'light', 'desktop'],
      [{ width: 390, height: 844 }, 'dark', 'phone-dark'],
    ] as const) {
      const app = await signedIn(b, stack().url, ws.ownerKey, `/c/${ch.id}`, viewport, scheme);
      const page = app.page;
      await page.getByRole('article', { name: /and a reply/ }).waitFor();
      const check = async (screen: string) => {
        for (const p of await axeProblems(page)) problems.push(`${tag} ${screen}: ${p}`);
        await screenshot(page, `${screen}-${tag}`);
      };
      await check('channel');
      await page.getByRole('article', { name: /bold/ }).getByRole('button', { name: '1 reply' }).click();
      await page.getByRole('complementary', { name: 'Thread' }).getByRole('article', { name: /in the thread/ }).waitFor();
      await check('thread');
      await page.getByRole('button', { name: 'Close thread' }).click();
      await page.getByRole('button', { name: 'Insert emoji' }).click();
      await page.getByRole('dialog', { name: 'Emoji' }).getByRole('button', { name: 'party popper' }).waitFor();
      await check('emoji');
      await page.keyboard.press('Escape');
      if (tag === 'desktop') {
        await page.getByRole('button', { name: 'People' }).click();
        await page.getByRole('dialog', { name: 'People' }).waitFor();
        await check('people');
        await page.keyboard.press('Escape');
        await page.getByRole('button', { name: 'Open dot.png' }).click();
        await page.getByRole('dialog', { name: 'dot.png' }).waitFor();
        await check('lightbox');
        await page.keyboard.press('Escape');
      } else {
        await page.getByRole('button', { name: 'Show conversations' }).click();
        await page.getByRole('navigation', { name: 'Conversations' }).getByRole('link', { name: new RegExp(ch.name) }).waitFor();
        await check('sidebar');
        await page.getByRole('navigation', { name: 'Conversations' }).getByRole('link', { name: new RegExp(ch.name) }).click();
      }
      await page.goto('/settings');
      await page.getByRole('tab', { name: 'Preferences' }).click();
      await check('settings');
      app.assertClean();
      await app.context.close();
    }
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });
});
