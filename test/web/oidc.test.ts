// Single sign-on against a real OpenID Connect provider run by the test
// (test/support/oidc-provider.ts), the whole code flow through Chromium:
// the web app's button, the provider's login, the callback, the one-time code
// exchanged for the browser's own key. Then what must fail: a wrong state, a
// replayed callback and code, an unverified email, a person nobody invited
// (OIDC_AUTO_CREATE off) and the same person created (on).
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { Client } from '../support/client.js';
import { uniqueEmail } from '../support/sign-in.js';
import { separateStack } from '../support/separate-stack.js';
import { sparePort, startTestProvider, type TestProvider } from '../support/oidc-provider.js';
import { uniqueName } from '../support/stack.js';
import { afterEachTest, launchBrowser, openApp, screenshot, type TestBrowser } from './browser.js';

type Separate = Awaited<ReturnType<typeof separateStack>>;

describe('web app: single sign-on (OpenID Connect) at level 3', function () {
  this.timeout(120_000);
  let b: TestBrowser;
  let provider: TestProvider;
  let invitedOnly: Separate;
  let autoCreate: Separate;
  let owner: Client;

  before(async () => {
    const ports = [await sparePort(), await sparePort()];
    const bases = ports.map((p) => `http://127.0.0.1:${p}`);
    provider = await startTestProvider(bases.map((base) => `${base}/api/v1/auth/oidc/callback`));
    const settings = (port: number, auto: boolean) => ({
      FEATURE_LEVEL: '3',
      PORT: String(port),
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      OIDC_ISSUER: provider.issuer,
      OIDC_CLIENT_ID: provider.clientId,
      OIDC_CLIENT_SECRET: provider.clientSecret,
      OIDC_NAME: 'Test IdP',
      OIDC_AUTO_CREATE: String(auto),
    });
    invitedOnly = await separateStack(settings(ports[0]!, false));
    autoCreate = await separateStack(settings(ports[1]!, true));
    owner = new Client(invitedOnly.stack.url, invitedOnly.env.config.bootstrapAdminKey);
    b = await launchBrowser();
  });
  afterEach(async function () {
    await afterEachTest(this);
  });
  after(async () => {
    await b?.close();
    await invitedOnly?.stop();
    await autoCreate?.stop();
    await provider?.close();
  });

  /** Clicks the SSO button and logs in at the provider as `login`; resolves the callback's Location. */
  async function signInThroughProvider(page: Page, login: string) {
    const callback = page.waitForResponse((r) => r.url().includes('/api/v1/auth/oidc/callback'));
    await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
    await page.locator('input[name="login"]').fill(login);
    await page.locator('input[name="password"]').fill('anything');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    const res = await callback;
    return { url: res.url(), location: res.headers()['location'] ?? '' };
  }

  it('signs a person in whose email an admin set: the code flow end to end, no key or code left in the address bar', async () => {
    const member = (await owner.post('/api/v1/users', { name: uniqueName('alice') })).body.data;
    const email = uniqueEmail('alice');
    expect((await owner.patch(`/api/v1/workspaces/current/members/${member.id}`, { email: email.toUpperCase() })).status).to.equal(200);
    provider.people.set('alice', { email, email_verified: true });

    expect((await new Client(invitedOnly.stack.url).get('/api/v1/auth/methods')).body.data).to.deep.equal({ password: true, oidc: { name: 'Test IdP' } });
    const app = await openApp(b, invitedOnly.stack.url, '/');
    await app.page.getByRole('link', { name: 'Sign in with Test IdP' }).waitFor();
    await screenshot(app.page, 'sso-signin-screen');
    const { url, location } = await signInThroughProvider(app.page, 'alice');
    expect(location).to.match(/^\/#code=[A-Za-z0-9_-]{43}$/);
    await app.page.locator('[data-stream-state="live"]').first().waitFor({ state: 'attached' });
    expect(app.page.url()).to.not.include('code=');
    const session = await app.page.evaluate(() => JSON.parse(localStorage.getItem('axid.session') ?? 'null') as { key: string });
    const me = (await new Client(invitedOnly.stack.url, session.key).get('/api/v1/users/me')).body.data;
    expect(me).to.include({ id: member.id, email: email.toUpperCase() });

    // The one-time code was spent by the app; the callback cannot be replayed.
    const code = location.replace('/#code=', '');
    expect((await new Client(invitedOnly.stack.url).post('/api/v1/auth/exchange', { code })).status).to.equal(401);
    const cookies = await app.context.cookies(invitedOnly.stack.url);
    const replay = await fetch(url, { redirect: 'manual', headers: { cookie: cookies.map((c) => `${c.name}=${c.value}`).join('; ') } });
    expect(replay.status).to.equal(302);
    expect(replay.headers.get('location')).to.equal('/#sign_in_error=sso_state');
    app.assertClean();
  });

  it('refuses a callback with a wrong state or from a browser that did not start the flow', async () => {
    const start = await fetch(`${invitedOnly.stack.url}/api/v1/auth/oidc/start`, { redirect: 'manual' });
    expect(start.status).to.equal(302);
    const authorize = new URL(start.headers.get('location')!);
    expect(authorize.origin).to.equal(provider.issuer);
    for (const p of ['state', 'nonce', 'code_challenge']) expect(authorize.searchParams.get(p), p).to.match(/^[A-Za-z0-9_-]{20,}$/);
    expect(authorize.searchParams.get('code_challenge_method')).to.equal('S256');
    const cookie = start.headers.get('set-cookie')!.split(';')[0]!;
    const state = authorize.searchParams.get('state')!;
    const callback = (query: string, headers: Record<string, string> = {}) =>
      fetch(`${invitedOnly.stack.url}/api/v1/auth/oidc/callback?${query}`, { redirect: 'manual', headers }).then((r) => r.headers.get('location'));
    expect(await callback(`code=made-up&state=${state}x`, { cookie })).to.equal('/#sign_in_error=sso_state');
    expect(await callback(`code=made-up&state=${state}`)).to.equal('/#sign_in_error=sso_state');
    // The right state with a code the provider never issued: the provider refuses it.
    expect(await callback(`code=made-up&state=${state}`, { cookie })).to.equal('/#sign_in_error=sso_failed');
    // ...and that state is spent.
    expect(await callback(`code=made-up&state=${state}`, { cookie })).to.equal('/#sign_in_error=sso_state');
  });

  it('refuses an unverified email, and a person nobody invited while OIDC_AUTO_CREATE is off', async () => {
    const member = (await owner.post('/api/v1/users', { name: uniqueName('carol') })).body.data;
    const email = uniqueEmail('carol');
    await owner.patch(`/api/v1/workspaces/current/members/${member.id}`, { email });
    provider.people.set('carol', { email, email_verified: false });
    const app = await openApp(b, invitedOnly.stack.url, '/');
    expect((await signInThroughProvider(app.page, 'carol')).location).to.equal('/#sign_in_error=email_unverified');
    await app.page.getByRole('alert').getByText('did not confirm your email address').waitFor();
    expect(app.page.url()).to.not.include('sign_in_error');
    await screenshot(app.page, 'sso-error');

    provider.people.set('dave', { email: uniqueEmail('dave'), email_verified: true });
    const other = await openApp(b, invitedOnly.stack.url, '/');
    expect((await signInThroughProvider(other.page, 'dave')).location).to.equal('/#sign_in_error=no_account');
    await other.page.getByRole('alert').getByText('No account').waitFor();
    expect(await other.page.evaluate(() => localStorage.getItem('axid.session'))).to.equal(null);
  });

  it('creates a member for a verified email with OIDC_AUTO_CREATE on', async () => {
    const email = uniqueEmail('erin');
    provider.people.set('erin', { email, email_verified: true, name: 'Erin Example', preferred_username: uniqueName('erin') });
    const app = await openApp(b, autoCreate.stack.url, '/');
    await signInThroughProvider(app.page, 'erin');
    await app.page.locator('[data-stream-state="live"]').first().waitFor({ state: 'attached' });
    const session = await app.page.evaluate(() => JSON.parse(localStorage.getItem('axid.session') ?? 'null') as { key: string });
    const me = (await new Client(autoCreate.stack.url, session.key).get('/api/v1/users/me')).body.data;
    expect(me).to.include({ email, role: 'member', display_name: 'Erin Example', is_agent: false });
    const autoOwner = new Client(autoCreate.stack.url, autoCreate.env.config.bootstrapAdminKey);
    const members = (await autoOwner.get('/api/v1/workspaces/current/members')).body.data as { id: string }[];
    expect(members.map((m) => m.id)).to.include(me.id);

    // A second sign-in finds the same person.
    const again = await openApp(b, autoCreate.stack.url, '/');
    await signInThroughProvider(again.page, 'erin');
    await again.page.locator('[data-stream-state="live"]').first().waitFor({ state: 'attached' });
    const key2 = await again.page.evaluate(() => JSON.parse(localStorage.getItem('axid.session') ?? 'null')?.key as string);
    expect((await new Client(autoCreate.stack.url, key2).get('/api/v1/users/me')).body.data.id).to.equal(me.id);
  });
});
