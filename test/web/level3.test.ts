// The web app at feature level 3 (contract §9, §12): read state that follows
// the person across tabs (unread and mention counts, the "new messages" line,
// the tab title), presence dots, and a resumed stream. Found by role and name.
import { expect } from 'chai';
import type { Stack } from '../../services/stack.js';
import { level3Stack, newWorkspace, uniqueName } from '../support/stack.js';
import { afterEachTest, launchBrowser, screenshot, signedIn, type TestBrowser } from './browser.js';

describe('web app at feature level 3', function () {
  this.timeout(120_000);
  let b: TestBrowser;
  let s: Stack;
  before(async () => {
    b = await launchBrowser();
    s = await level3Stack();
  });
  afterEach(async function () {
    await afterEachTest(this);
  });
  after(async () => b?.close());

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
    expect(await tabB.page.title()).to.match(/^\(3\) /);
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
    expect(await tabA.page.title()).to.not.match(/^\(/);
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
});
