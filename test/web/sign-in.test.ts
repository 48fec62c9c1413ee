// Signing in like people (contract §12, level 3) in Chromium: an invite link
// makes an account and signs in, the person signs out and back in with the
// password, the admin sees them; a one-time sign-in link works once and
// leaves neither a key nor a live code in the address bar or the history.
import { expect } from 'chai';
import type { Stack } from '../../services/stack.js';
import { Client } from '../support/client.js';
import { PASSWORD, clearSignInFailures, uniqueEmail } from '../support/sign-in.js';
import { level3Stack, newWorkspace, uniqueName } from '../support/stack.js';
import { openApp, screenshot, signedIn, suiteBrowser } from './browser.js';

describe('web app: signing in at level 3', function () {
  this.timeout(120_000);
  const b = suiteBrowser();
  let s: Stack;
  before(async () => {
    s = await level3Stack();
  });
  afterEach(async () => clearSignInFailures(s));

  it('fills in the email of an invite made for one address', async () => {
    const ws = await newWorkspace(s);
    const admin = await signedIn(b, s.url, ws.ownerKey, '/settings');
    await admin.page.getByRole('tab', { name: 'People and agents' }).click();
    const email = uniqueEmail('invited');
    await admin.page.getByRole('form', { name: 'Create an invite link' }).getByRole('textbox').fill(email);
    await admin.page.getByRole('button', { name: 'Create invite link' }).click();
    const link = (await admin.page.getByTestId('invite-link').innerText()).trim();
    const person = await openApp(b, s.url, new URL(link).pathname + new URL(link).hash);
    await person.page.getByRole('heading', { name: 'Welcome to Axid' }).waitFor();
    expect(await person.page.getByLabel('Email').inputValue()).to.equal(email);
    expect(person.page.url()).to.not.include('email=');
    person.assertClean();
    admin.assertClean();
  });

  it('a person invited by link signs up, signs out, signs in with the password, and the admin sees them', async () => {
    const ws = await newWorkspace(s);
    const admin = await signedIn(b, s.url, ws.ownerKey, '/settings');
    await admin.page.getByRole('tab', { name: 'People and agents' }).click();
    await admin.page.getByRole('button', { name: 'Create invite link' }).click();
    const link = (await admin.page.getByTestId('invite-link').innerText()).trim();
    expect(link).to.match(/\/#invite=[A-Za-z0-9_-]{43}$/);
    await screenshot(admin.page, 'signin-invite-created');

    const name = uniqueName('newcomer');
    const email = uniqueEmail('newcomer');
    const person = await openApp(b, s.url, new URL(link).pathname + new URL(link).hash);
    const page = person.page;
    await page.getByRole('heading', { name: 'Welcome to Axid' }).waitFor();
    expect(page.url()).to.not.include('invite=');
    await page.getByLabel('User name').fill(name);
    await page.getByLabel(/Display name/).fill('New Comer');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByLabel('Repeat the password').fill(PASSWORD);
    await screenshot(page, 'signin-invite-welcome');
    await page.getByRole('button', { name: 'Join and sign in' }).click();
    await page.locator('[data-stream-state="live"]').first().waitFor({ state: 'attached' });

    // Signs out (the browser's key is revoked), then in with the password.
    const browserKey = await page.evaluate(() => JSON.parse(localStorage.getItem('axid.session') ?? 'null')?.key as string);
    expect((await new Client(s.url, browserKey).get('/api/v1/users/me')).body.data).to.include({ name, email });
    await page.goto('/settings');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to Axid' }).waitFor();
    expect((await new Client(s.url, browserKey).get('/api/v1/users/me')).status).to.equal(401);
    await screenshot(page, 'signin-screen');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('not my password at all');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('alert').getByText('That email and password do not match.', { exact: false }).waitFor();
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    // Signed out from the settings, signed in back on them.
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await page.goto('/');
    await page.locator('[data-stream-state="live"]').first().waitFor({ state: 'attached' });

    await admin.page.reload();
    await admin.page.getByRole('tab', { name: 'People and agents' }).click();
    await admin.page.getByRole('row', { name: new RegExp(name) }).waitFor();
    // The invite is used: no longer listed (waited for: the list is read after the people).
    await admin.page.getByText('No open invites.').waitFor();
    person.assertClean();
    admin.assertClean();
  });

  it('keeps the API key form under "Sign in with an API key"', async () => {
    const ws = await newWorkspace(s);
    const app = await openApp(b, s.url, '/');
    await app.page.getByText('Sign in with an API key').click();
    await app.page.getByLabel('API key').fill(ws.ownerKey);
    await app.page.getByRole('button', { name: 'Sign in with key' }).click();
    await app.page.locator('[data-stream-state="live"]').first().waitFor({ state: 'attached' });
    app.assertClean();
  });

  it('a one-time sign-in link signs in once; neither the key nor a live code stays in the address bar or the history', async () => {
    const ws = await newWorkspace(s);
    const owner = await signedIn(b, s.url, ws.ownerKey, '/settings');
    await owner.page.getByRole('button', { name: 'Make a sign-in link' }).click();
    const link = (await owner.page.getByTestId('signin-link').innerText()).trim();
    expect(link).to.match(/\/#code=[A-Za-z0-9_-]{43}$/);
    expect(link).to.not.include(ws.ownerKey);
    const ownerBrowserKey = await owner.page.evaluate(() => JSON.parse(localStorage.getItem('axid.session') ?? 'null')?.key as string);
    expect(link).to.not.include(ownerBrowserKey);

    const other = await openApp(b, s.url, '/about:blank-start');
    await other.page.goto(new URL(link).pathname + new URL(link).hash);
    await other.page.locator('[data-stream-state="live"]').first().waitFor({ state: 'attached' });
    expect(other.page.url()).to.not.include('code=');
    const session = await other.page.evaluate(() => JSON.parse(localStorage.getItem('axid.session') ?? 'null') as { key: string });
    expect(session.key).to.not.equal(ws.ownerKey);
    expect((await new Client(s.url, session.key).get('/api/v1/users/me')).body.data.id).to.equal(ws.ownerId);
    // Back in the history: the entry the link made no longer holds the code.
    await other.page.goBack();
    expect(other.page.url()).to.not.include('code=');
    await other.page.goForward();
    expect(other.page.url()).to.not.include('code=');

    // A second browser opening the same link: the code is spent.
    const third = await openApp(b, s.url, new URL(link).pathname + new URL(link).hash);
    await third.page.getByRole('heading', { name: 'Sign in to Axid' }).waitFor();
    await third.page.getByRole('alert').getByText(/already used or has expired/).waitFor();
    expect(await third.page.evaluate(() => localStorage.getItem('axid.session'))).to.equal(null);
    other.assertClean();
  });

  it('an admin makes a password-reset link; the person sets a new password with it and is signed in', async () => {
    const ws = await newWorkspace(s);
    const member = await ws.user();
    const email = uniqueEmail('forgetful');
    await ws.owner.patch(`/api/v1/workspaces/current/members/${member.id}`, { email });
    const admin = await signedIn(b, s.url, ws.ownerKey, '/settings');
    await admin.page.getByRole('tab', { name: 'People and agents' }).click();
    const name = (await ws.owner.get(`/api/v1/users/${member.id}`)).body.data.name as string;
    await admin.page.getByRole('button', { name: `Password-reset link for ${name}` }).click();
    const link = (await admin.page.getByTestId('reset-link').innerText()).trim();
    expect(link).to.match(/\/#reset=[A-Za-z0-9_-]{43}$/);

    const person = await openApp(b, s.url, new URL(link).pathname + new URL(link).hash);
    await person.page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
    expect(person.page.url()).to.not.include('reset=');
    await person.page.getByLabel('New password', { exact: true }).fill('my fresh passphrase');
    await person.page.getByLabel('Repeat the password').fill('my fresh passphrase');
    await person.page.getByRole('button', { name: 'Save and sign in' }).click();
    await person.page.locator('[data-stream-state="live"]').first().waitFor({ state: 'attached' });
    expect((await new Client(s.url).post('/api/v1/auth/sign-in', { email, password: 'my fresh passphrase' })).status).to.equal(200);
    person.assertClean();
    admin.assertClean();
  });

  it('changes the password from the settings, signing out the other browsers', async () => {
    const ws = await newWorkspace(s);
    const member = await ws.user();
    const email = uniqueEmail('changer');
    await ws.owner.patch(`/api/v1/workspaces/current/members/${member.id}`, { email });
    await member.client.patch('/api/v1/users/me', { password: PASSWORD });
    const elsewhere = (await new Client(s.url).post('/api/v1/auth/sign-in', { email, password: PASSWORD })).body.data.api_key.key as string;
    const app = await signedIn(b, s.url, member.key, '/settings');
    await app.page.getByLabel(/Current password/).fill(PASSWORD);
    await app.page.getByLabel('New password', { exact: true }).fill('another long passphrase');
    await app.page.getByLabel('Repeat the new password').fill('another long passphrase');
    await app.page.getByRole('button', { name: 'Change password' }).click();
    await app.page.getByRole('status').getByText('Password changed').waitFor();
    await screenshot(app.page, 'signin-password-changed');
    expect((await new Client(s.url, elsewhere).get('/api/v1/users/me')).status).to.equal(401);
    expect((await new Client(s.url).post('/api/v1/auth/sign-in', { email, password: 'another long passphrase' })).status).to.equal(200);
    app.assertClean();
  });
});
