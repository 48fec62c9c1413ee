// Workspace settings in Chromium: keys (shown once, revoked keys refused),
// agents, webhooks (the compatible address posts live), sign-out and a
// revoked browser key.
import { expect } from 'chai';
import { Client } from '../support/client.js';
import { newWorkspace, stack, uniqueName } from '../support/stack.js';
import { screenshot, signedIn, suiteBrowser } from './browser.js';

describe('web app: workspace settings in the browser', function () {
  this.timeout(90_000);
  const b = suiteBrowser();

  it('creates a key shown once and revokes it (the old key then gets 401); creates an agent', async () => {
    const ws = await newWorkspace();
    const app = await signedIn(b, stack().url, ws.ownerKey, '/settings');
    const page = app.page;
    page.on('dialog', (d) => void d.accept());
    await page.getByRole('tab', { name: 'API keys' }).waitFor();
    // The browser's own key is listed and marked.
    await page.getByRole('row', { name: /this browser/ }).waitFor();

    const keyName = uniqueName('ci');
    await page.getByLabel('Name').fill(keyName);
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = (await page.getByTestId('secret').innerText()).trim();
    expect((await new Client(stack().url, secret).get('/api/v1/users/me')).status).to.equal(200);
    await page.getByRole('row', { name: new RegExp(keyName) }).waitFor();
    await screenshot(page, 'settings-keys');
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.getByTestId('secret').count()).to.equal(0);
    await page.getByRole('button', { name: `Revoke ${keyName}` }).click();
    await page.getByRole('row', { name: new RegExp(keyName) }).waitFor({ state: 'detached' });
    expect((await new Client(stack().url, secret).get('/api/v1/users/me')).status).to.equal(401);

    await page.getByRole('tab', { name: 'People and agents' }).click();
    const agentName = uniqueName('helper');
    await page.getByLabel('Name').fill(agentName);
    await page.getByLabel('Agent (bot)').check();
    await page.getByRole('button', { name: 'Create agent' }).click();
    const agentKey = (await page.getByTestId('secret').innerText()).trim();
    const agent = await new Client(stack().url, agentKey).get('/api/v1/users/me');
    expect(agent.body.data).to.include({ name: agentName, is_agent: true });
    await page.getByRole('row', { name: new RegExp(agentName) }).getByText('bot').waitFor();
    await screenshot(page, 'settings-people');

    // Roles change in place; the workspace's name and user cap are saved.
    const agentId = agent.body.data.id as string;
    const patched = page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().endsWith(`/members/${agentId}`));
    await page.getByRole('combobox', { name: `Role of ${agentName}` }).selectOption('admin');
    expect((await patched).status()).to.equal(200);
    expect((await ws.owner.get(`/api/v1/users/${agentId}`)).body.data.role).to.equal('admin');
    await page.getByRole('tab', { name: 'Workspace' }).click();
    const wsName = uniqueName('Renamed');
    await page.getByLabel('Name').fill(wsName);
    await page.getByLabel(/Most human users/).fill('25');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const current = await ws.owner.get('/api/v1/workspaces/current');
    expect(current.body.data.name).to.equal(wsName);
    expect(current.body.data.settings.max_users).to.equal(25);
    app.assertClean();
  });

  it('creates a webhook with both addresses; a post to the compatible one shows live', async () => {
    const ws = await newWorkspace();
    const ch = await ws.owner.post('/api/v1/channels', { name: uniqueName('alerts') });
    const app = await signedIn(b, stack().url, ws.ownerKey, '/settings');
    const page = app.page;
    await page.getByRole('tab', { name: 'Incoming webhooks' }).click();
    await page.getByLabel('Name').fill('CI');
    await page.getByLabel('Channel').selectOption(ch.body.data.id);
    await page.getByRole('button', { name: 'Create webhook' }).click();
    const native = (await page.getByTestId('native-url').innerText()).trim();
    const compat = (await page.getByTestId('compat-url').innerText()).trim();
    expect(compat).to.equal(native.replace('/hooks/', '/hooks/compat/'));
    await screenshot(page, 'settings-webhooks');

    await page.getByRole('button', { name: /Back to chat/ }).click();
    await page.getByRole('link', { name: new RegExp(ch.body.data.name) }).click();
    await page.getByText('No messages here yet.').waitFor();
    const path = new URL(compat).pathname;
    const res = await fetch(stack().url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'Build *passed* on main' }) });
    expect(res.status).to.equal(200);
    await page.locator('article.message', { hasText: 'passed on main' }).waitFor();
    app.assertClean();
  });

  it('returns to sign-in with a clear message when the browser key is revoked, and sign-out revokes it', async () => {
    const ws = await newWorkspace();
    const app = await signedIn(b, stack().url, ws.ownerKey);
    const keys = await ws.owner.get('/api/v1/api-keys?limit=200');
    const browserKey = keys.body.data.find((k: { name: string }) => k.name.startsWith('Web: '));
    expect(browserKey, 'the browser key').to.not.equal(undefined);
    expect((await ws.owner.delete(`/api/v1/api-keys/${browserKey.id}`)).status).to.equal(204);
    // The next request with it (opening settings loads the key list) is refused.
    await app.page.getByRole('button', { name: 'Settings', exact: true }).click();
    await app.page.getByRole('alert').filter({ hasText: /revoked or is no longer valid/ }).waitFor();
    expect(await app.page.evaluate(() => localStorage.getItem('axid.session'))).to.equal(null);

    // Sign in again, then sign out: the new browser key is revoked too.
    let session: { key: string } | null = null;
    app.page.on('request', (r) => {
      const auth = r.headers().authorization;
      if (auth && auth !== `Bearer ${ws.ownerKey}`) session = { key: auth.slice('Bearer '.length) };
    });
    await app.page.getByLabel('API key').fill(ws.ownerKey);
    await app.page.getByRole('button', { name: 'Sign in' }).click();
    // Back where the user was (settings).
    await app.page.getByRole('button', { name: 'Sign out' }).click();
    await app.page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(session, 'a request with the new browser key').to.not.equal(null);
    expect((await new Client(stack().url, session!.key).get('/api/v1/users/me')).status).to.equal(401);
    app.assertClean();
  });
});
