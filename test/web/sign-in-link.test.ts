// The level-2 sign-in link (`/#key=<key>`, contract §10) in Chromium: it is
// one-time. The app makes its own key from the link's, then revokes the
// link's key, so the copy left in the browser's history or wherever the link
// was pasted is dead; opened again, the link shows the sign-in screen saying
// so in plain words. A key pasted into the sign-in form stays the person's.
import { expect } from 'chai';
import { Client } from '../support/client.js';
import { expectOk } from '../support/expect.js';
import { newWorkspace, stack } from '../support/stack.js';
import { openApp, screenshot, suiteBrowser } from './browser.js';

const browserKeyOf = (page: import('playwright-core').Page) => page.evaluate(() => JSON.parse(localStorage.getItem('axid.session') ?? 'null')?.key as string);

describe('web app: the sign-in link at level 2', function () {
  this.timeout(90_000);
  const b = suiteBrowser();

  it("signs in once: the link's key is revoked once the app has its own, and the link opened again says it was used", async () => {
    const ws = await newWorkspace();
    const url = stack().url;
    const linkKey = expectOk(await ws.owner.post('/api/v1/api-keys', { name: 'a link for my laptop' }), 201).data.key as string;

    const app = await openApp(b, url, `/#key=${encodeURIComponent(linkKey)}`);
    await app.page.locator('[data-stream-state="live"]').first().waitFor({ state: 'attached' });
    expect(app.page.url()).to.not.include(linkKey);
    const browserKey = await browserKeyOf(app.page);
    expect(browserKey).to.not.equal(linkKey);
    expect((await new Client(url, browserKey).get('/api/v1/users/me')).status, "the browser's own key").to.equal(200);
    expect((await new Client(url, linkKey).get('/api/v1/users/me')).status, "the link's key").to.equal(401);
    // Only the link's key: the key it was made with lives on.
    expect((await ws.owner.get('/api/v1/users/me')).status).to.equal(200);
    const keys = expectOk(await ws.owner.get('/api/v1/api-keys')).data as { name: string }[];
    expect(keys.map((k) => k.name)).to.not.include('a link for my laptop');

    // The same link again (from the history, or from wherever it was pasted), in another browser.
    const again = await openApp(b, url, `/#key=${encodeURIComponent(linkKey)}`);
    await again.page.getByRole('heading', { name: 'Sign in to Axid' }).waitFor();
    await again.page.getByRole('alert').getByText('This sign-in link was already used or has expired. Sign in again.').waitFor();
    expect(again.page.url()).to.not.include(linkKey);
    expect(await again.page.evaluate(() => localStorage.getItem('axid.session'))).to.equal(null);
    await screenshot(again.page, 'signin-link-used');
    app.assertClean();
    again.assertClean();
  });

  it('keeps a key pasted into the sign-in form alive', async () => {
    const ws = await newWorkspace();
    const url = stack().url;
    const pasted = expectOk(await ws.owner.post('/api/v1/api-keys', { name: 'pasted' }), 201).data.key as string;
    const app = await openApp(b, url, '/');
    await app.page.getByLabel('API key').fill(pasted);
    await app.page.getByRole('button', { name: 'Sign in' }).click();
    await app.page.locator('[data-stream-state="live"]').first().waitFor({ state: 'attached' });
    expect(await browserKeyOf(app.page)).to.not.equal(pasted);
    expect((await new Client(url, pasted).get('/api/v1/users/me')).status).to.equal(200);
    app.assertClean();
  });
});
