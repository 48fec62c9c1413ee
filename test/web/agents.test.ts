// Agents in the web app (level 3, docs/bots.md "Agents at home"; docs/web.md
// "Agents"): suggested prompts in an empty DM, feedback and approval blocks
// answered live, `/` commands completed and invoked, ephemeral replies, key
// scopes and conversations, and a hook's own name on its posts. Each used as
// a person would, found by role and name; axe at desktop and phone width.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import type { Stack } from '../../services/stack.js';
import { Client } from '../support/client.js';
import { expectOk } from '../support/expect.js';
import { openRaw, type RawStream } from '../support/sse.js';
import { level3Stack, newWorkspace, stack, uniqueName, type TestWorkspace } from '../support/stack.js';
import { commandQuery, matchCommands, parseCommand } from '../../services/web/src/lib/agents.js';
import { axeProblems, screenshot, signedIn, suiteBrowser } from './browser.js';

const PHONE = { width: 390, height: 844 };
const block = (name: string, props: Record<string, unknown>) => ({ type: `block_${name}`, attrs: { blockName: name, version: 1, props } });

async function channelWith(ws: TestWorkspace, members: string[]) {
  const ch = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('agents') }), 201).data as { id: string; name: string };
  for (const id of members) expectOk(await ws.owner.post(`/api/v1/channels/${ch.id}/members`, { user_id: id }), 201);
  return ch;
}

async function axeAt(page: Page, where: string, problems: string[]) {
  for (const p of await axeProblems(page)) problems.push(`${where}: ${p}`);
}

describe('web app: agents (level 3)', function () {
  this.timeout(180_000);
  const b = suiteBrowser();
  let s: Stack;
  const streams: RawStream[] = [];
  before(async () => {
    s = await level3Stack();
  });
  afterEach(() => {
    for (const x of streams.splice(0)) x.close();
  });

  it('offers an agent’s suggested prompts in an empty DM; a click sends the prompt as the person’s message and the prompts go', async () => {
    const ws = await newWorkspace(s);
    const bot = await ws.user({ name: uniqueName('helper'), is_agent: true });
    expectOk(
      await bot.client.patch('/api/v1/users/me', {
        suggested_prompts: [
          { title: 'Deploy status', message: 'What is deployed where?' },
          { title: 'On call', message: 'Who is on call this week?' },
        ],
      }),
    );
    const dm = expectOk(await ws.owner.post('/api/v1/dms', { user_ids: [bot.id] }), 201).data as { id: string };
    const problems: string[] = [];
    // The phone first: the desktop run sends a prompt, and the DM is no longer empty.
    for (const [tag, viewport] of [['phone', PHONE], ['desktop', undefined]] as const) {
      const app = await signedIn(b, s.url, ws.ownerKey, `/c/${dm.id}`, viewport);
      const prompts = app.page.getByRole('region', { name: /Suggested prompts for/ });
      await prompts.getByRole('button', { name: /Deploy status/ }).waitFor();
      await axeAt(app.page, `prompts ${tag}`, problems);
      await screenshot(app.page, `agents-prompts-${tag}`);
      if (tag === 'phone') {
        await app.context.close();
        continue;
      }
      await prompts.getByRole('button', { name: /On call/ }).click();
      await app.page.getByRole('article', { name: /Who is on call this week\?/ }).and(app.page.locator('[data-state="sent"]')).waitFor();
      await prompts.waitFor({ state: 'detached' });
      app.assertClean();
      await app.context.close();
    }
    const sent = expectOk(await bot.client.get(`/api/v1/dms/${dm.id}/messages`)).data as { content: string; author_id: string }[];
    expect(sent.map((m) => [m.content, m.author_id])).to.deep.equal([['Who is on call this week?', ws.ownerId]]);
    expect(problems).to.deep.equal([]);
  });

  it('renders feedback buttons and an approval request, answers them through the API, and every reader sees the answers live', async () => {
    const ws = await newWorkspace(s);
    const bot = await ws.user({ name: uniqueName('deploybot'), is_agent: true });
    const bobName = uniqueName('bob');
    const bob = await ws.user({ name: bobName });
    const ch = await channelWith(ws, [bot.id, bob.id]);
    const me = (await ws.owner.get('/api/v1/users/me')).body.data as { id: string; name: string };
    const botStream = await openRaw(s.url, bot.key);
    streams.push(botStream);
    expectOk(
      await bot.client.post(`/api/v1/channels/${ch.id}/messages`, {
        content: 'The logs show one failed job.',
        content_json: { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'The logs show one failed job.' }] }, block('feedback_buttons', {})] },
      }),
      201,
    );
    const request = expectOk(
      await bot.client.post(`/api/v1/channels/${ch.id}/messages`, {
        content: 'Deploy main to production?',
        content_json: {
          type: 'doc',
          content: [
            block('approval_request', {
              title: 'Deploy main to production?',
              description: 'Build 42 passed.',
              approve_label: 'Deploy',
              deny_label: 'Cancel',
              expires_at: new Date(Date.now() + 10 * 60_000).toISOString(),
              approver_ids: [ws.ownerId],
            }),
          ],
        },
      }),
      201,
    ).data as { id: string };

    const owner = await signedIn(b, s.url, ws.ownerKey, `/c/${ch.id}`);
    const bobApp = await signedIn(b, s.url, bob.key, `/c/${ch.id}`);
    const feedback = (page: Page) => page.getByRole('group', { name: 'Was this helpful?' });
    const approval = (page: Page) => page.getByRole('group', { name: 'Approval request: Deploy main to production?' });
    await feedback(owner.page).waitFor();
    await approval(owner.page).getByRole('button', { name: 'Deploy' }).waitFor();
    // Bob is not named by the request: he sees who it waits for, and no buttons.
    await approval(bobApp.page).getByText(/Waiting for/).waitFor();
    expect(await approval(bobApp.page).getByRole('button').count()).to.equal(0);
    const problems: string[] = [];
    await axeAt(owner.page, 'blocks desktop', problems);
    await screenshot(owner.page, 'agents-blocks-open');

    // Feedback: the thumb is pressed, the count is 1 here and at Bob's, and the agent is told.
    await feedback(owner.page).getByRole('button', { name: 'Helpful 0', exact: true }).click();
    await feedback(owner.page).getByRole('button', { name: 'Helpful 1', exact: true, pressed: true }).waitFor();
    await feedback(bobApp.page).getByRole('button', { name: 'Helpful 1', exact: true, pressed: false }).waitFor();
    const told = await botStream.waitFor((f) => f.event === 'interaction.feedback');
    expect(told.data).to.include({ user_id: ws.ownerId, value: 'positive' });
    // Bob says it was not helpful: both pages count one of each.
    await feedback(bobApp.page).getByRole('button', { name: 'Not helpful 0' }).click();
    await feedback(owner.page).getByRole('button', { name: 'Not helpful 1' }).waitFor();

    // Approval: the owner comments and approves; both pages show who decided, and the buttons are gone.
    await approval(owner.page).getByRole('textbox', { name: /Comment on/ }).fill('Ship it');
    await approval(owner.page).getByRole('button', { name: 'Deploy' }).click();
    for (const page of [owner.page, bobApp.page]) {
      await approval(page).getByRole('status').filter({ hasText: 'Approved' }).filter({ hasText: 'Ship it' }).waitFor();
      expect(await approval(page).getByRole('button').count()).to.equal(0);
    }
    const decided = await botStream.waitFor((f) => f.event === 'interaction.approval');
    expect(decided.data).to.include({ message_id: request.id, decision: 'approve', user_id: ws.ownerId, comment: 'Ship it' });
    expect(await approval(bobApp.page).innerText()).to.include(me.name);
    await axeAt(owner.page, 'blocks answered desktop', problems);
    await screenshot(owner.page, 'agents-blocks-answered');
    owner.assertClean();
    bobApp.assertClean();

    const phone = await signedIn(b, s.url, ws.ownerKey, `/c/${ch.id}`, PHONE, 'dark');
    await approval(phone.page).getByRole('status').filter({ hasText: 'Approved' }).waitFor();
    await axeAt(phone.page, 'blocks phone', problems);
    await screenshot(phone.page, 'agents-blocks-phone-dark');
    expect(problems).to.deep.equal([]);
  });

  it('completes `/` with the agents’ commands and their descriptions; Enter invokes one; refusals say why', async () => {
    const ws = await newWorkspace(s);
    const botName = uniqueName('deploybot');
    const bot = await ws.user({ name: botName, is_agent: true });
    expectOk(
      await bot.client.put('/api/v1/users/me/commands', [
        { name: 'deploy', description: 'Deploy a branch', usage: '/deploy <branch>' },
        { name: 'rollback', description: 'Undo the last deploy' },
      ]),
    );
    const ch = await channelWith(ws, [bot.id]);
    const elsewhere = await channelWith(ws, []);
    const botStream = await openRaw(s.url, bot.key);
    streams.push(botStream);
    const app = await signedIn(b, s.url, ws.ownerKey, `/c/${ch.id}`);
    const page = app.page;
    const box = page.getByRole('textbox', { name: `Message #${ch.name}` });
    await box.click();
    await box.pressSequentially('/');
    const list = page.getByRole('listbox', { name: 'Commands' });
    await list.getByRole('option', { name: /\/deploy <branch>.*Deploy a branch/ }).waitFor();
    await list.getByRole('option', { name: /rollback.*Undo the last deploy/ }).waitFor();
    const problems: string[] = [];
    await axeAt(page, 'commands desktop', problems);
    await screenshot(page, 'agents-commands');
    await box.pressSequentially('de');
    expect(await list.getByRole('option').count()).to.equal(1);
    expect(await box.getAttribute('aria-activedescendant')).to.be.a('string');
    await box.press('Enter');
    expect(await box.inputValue()).to.equal('/deploy ');
    await list.waitFor({ state: 'detached' });
    await box.pressSequentially('staging');
    await box.press('Enter');
    await page.getByRole('status').filter({ hasText: `/deploy sent to ${botName}` }).waitFor();
    const invoked = await botStream.waitFor((f) => f.event === 'command.invoked');
    expect(invoked.data).to.include({ command: 'deploy', text: 'staging', conversation_id: ch.id, user_id: ws.ownerId });
    expect(await box.inputValue()).to.equal('');
    // Nothing was posted: a command is not a message.
    expect((expectOk(await ws.owner.get(`/api/v1/channels/${ch.id}/messages`)).data as unknown[]).length).to.equal(0);

    // A name no agent offers is refused and kept, to be fixed.
    await box.fill('/deplyo now');
    await box.press('Enter');
    await page.getByRole('alert').filter({ hasText: '/deplyo is not a command in this workspace' }).waitFor();
    expect(await box.inputValue()).to.equal('/deplyo now');
    // As the refusal says: a space before the / posts the text as a message.
    await box.fill(' /deplyo now');
    await box.press('Enter');
    await page.getByRole('article', { name: /\/deplyo now/ }).and(page.locator('[data-state="sent"]')).waitFor();

    // Where the agent is not a member, the API's 404 becomes a reason.
    await page.goto(`/c/${elsewhere.id}`);
    const other = page.getByRole('textbox', { name: `Message #${elsewhere.name}` });
    await other.fill('/rollback');
    await other.press('Enter');
    await page.getByRole('alert').filter({ hasText: `/rollback can't be used here: @${botName} is not a member of this conversation.` }).waitFor();
    await screenshot(page, 'agents-command-refused');
    app.assertClean();

    const phone = await signedIn(b, s.url, ws.ownerKey, `/c/${ch.id}`, PHONE);
    const phoneBox = phone.page.getByRole('textbox', { name: `Message #${ch.name}` });
    await phoneBox.click();
    await phoneBox.pressSequentially('/');
    await phone.page.getByRole('listbox', { name: 'Commands' }).getByRole('option', { name: /^\/deploy/ }).waitFor();
    await axeAt(phone.page, 'commands phone', problems);
    await screenshot(phone.page, 'agents-commands-phone');
    expect(problems).to.deep.equal([]);
  });

  it('shows an ephemeral reply to its person only, marked "Only visible to you", dismissable and gone after a reload', async () => {
    const ws = await newWorkspace(s);
    const botName = uniqueName('helper');
    const bot = await ws.user({ name: botName, is_agent: true });
    const bob = await ws.user();
    const ch = await channelWith(ws, [bot.id, bob.id]);
    expectOk(await ws.owner.post(`/api/v1/channels/${ch.id}/messages`, { content: 'anyone?' }), 201);
    const owner = await signedIn(b, s.url, ws.ownerKey, `/c/${ch.id}`);
    const bobApp = await signedIn(b, s.url, bob.key, `/c/${ch.id}`);
    await owner.page.getByRole('article', { name: /anyone\?/ }).waitFor();
    await bobApp.page.getByRole('article', { name: /anyone\?/ }).waitFor();
    expectOk(await bot.client.post(`/api/v1/channels/${ch.id}/ephemeral`, { user_id: ws.ownerId, content: 'Only you can see **this**.' }));
    const mine = owner.page.getByRole('list', { name: 'Only visible to you' }).getByRole('listitem');
    await mine.filter({ hasText: 'Only you can see this.' }).waitFor();
    expect(await mine.innerText()).to.include('Only visible to you');
    const problems: string[] = [];
    await axeAt(owner.page, 'ephemeral desktop', problems);
    await screenshot(owner.page, 'agents-ephemeral');
    // Bob gets a later message, by then he would have the ephemeral one too.
    expectOk(await bot.client.post(`/api/v1/channels/${ch.id}/messages`, { content: 'public answer' }), 201);
    await bobApp.page.getByRole('article', { name: /public answer/ }).waitFor();
    expect(await bobApp.page.getByText('Only you can see').count()).to.equal(0);

    await mine.getByRole('button', { name: `Dismiss the message from ${botName}` }).click();
    await mine.waitFor({ state: 'detached' });
    // Another one, then a reload: it was never stored.
    expectOk(await bot.client.post(`/api/v1/channels/${ch.id}/ephemeral`, { user_id: ws.ownerId, content: 'Second note.' }));
    await mine.filter({ hasText: 'Second note.' }).waitFor();
    await owner.page.reload();
    await owner.page.getByRole('article', { name: /public answer/ }).waitFor();
    expect(await owner.page.getByText('Second note.').count()).to.equal(0);
    owner.assertClean();
    bobApp.assertClean();

    const phone = await signedIn(b, s.url, ws.ownerKey, `/c/${ch.id}`, PHONE, 'dark');
    await phone.page.getByRole('article', { name: /public answer/ }).waitFor();
    expectOk(await bot.client.post(`/api/v1/channels/${ch.id}/ephemeral`, { user_id: ws.ownerId, content: 'Seen on the phone.' }));
    await phone.page.getByRole('list', { name: 'Only visible to you' }).getByText('Seen on the phone.').waitFor();
    await axeAt(phone.page, 'ephemeral phone', problems);
    await screenshot(phone.page, 'agents-ephemeral-phone-dark');
    expect(problems).to.deep.equal([]);
  });

  it('creates an API key limited to chosen scopes and conversations, and the key list shows them', async () => {
    const ws = await newWorkspace(s);
    const ch = await channelWith(ws, []);
    const problems: string[] = [];
    for (const [tag, viewport] of [['desktop', undefined], ['phone', PHONE]] as const) {
      const app = await signedIn(b, s.url, ws.ownerKey, '/settings', viewport);
      const page = app.page;
      const keyName = `runtime ${tag}`;
      await page.getByRole('textbox', { name: 'Name' }).fill(keyName);
      await page.getByText('Limit what the key can do').click();
      const scopes = page.getByRole('group', { name: /Scopes/ });
      await scopes.getByRole('checkbox', { name: /^read/ }).check();
      await scopes.getByRole('checkbox', { name: /^messages:write/ }).check();
      await page.getByRole('group', { name: /Conversations/ }).getByRole('checkbox', { name: `#${ch.name}` }).check();
      await page.getByText(/Limit what the key can do \(read, messages:write, 1 conversation\)/).waitFor();
      await page.getByRole('group', { name: /Conversations/ }).scrollIntoViewIfNeeded();
      await axeAt(page, `key limits ${tag}`, problems);
      await screenshot(page, `agents-key-limits-${tag}`);
      await page.getByRole('button', { name: 'Create key' }).click();
      await page.getByTestId('secret').waitFor();
      const row = page.getByRole('row').filter({ hasText: keyName });
      await row.getByText('read, messages:write').waitFor();
      await row.getByText(`1 conversation: #${ch.name}`).waitFor();
      if (tag === 'desktop') await screenshot(page, 'agents-key-list');
      app.assertClean();
      await app.context.close();
    }
    const keys = expectOk(await ws.owner.get('/api/v1/api-keys?limit=200')).data as { name: string; scopes: string[] | null; conversation_ids: string[] | null }[];
    const made = keys.filter((k) => k.name.startsWith('runtime '));
    expect(made).to.have.length(2);
    for (const k of made) expect(k).to.deep.include({ scopes: ['read', 'messages:write'], conversation_ids: [ch.id] });
    expect(problems).to.deep.equal([]);
  });

  it("shows an incoming webhook's posts under the hook's name and icon, not its creator with a bot badge", async () => {
    const ws = await newWorkspace(s);
    const ch = await channelWith(ws, []);
    const hook = expectOk(await ws.owner.post('/api/v1/webhooks/incoming', { channel_id: ch.id, name: 'CI pipeline' }), 201).data as { id: string };
    const anonymous = new Client(s.url);
    expectOk(await anonymous.post(`/hooks/${hook.id}`, { content: 'Build 42 **passed**' }), 201);
    expect((await anonymous.post(`/hooks/compat/${hook.id}`, { text: 'Disk 90% full', username: 'Disk alerts', icon_emoji: ':warning:' })).status).to.equal(200);
    const app = await signedIn(b, s.url, ws.ownerKey, `/c/${ch.id}`);
    const native = app.page.getByRole('article', { name: /^CI pipeline: Build 42/ });
    await native.waitFor();
    await native.locator('.hook-avatar').waitFor();
    expect(await native.locator('header .badge').allTextContents()).to.deep.equal(['app']);
    const owner = (await ws.owner.get('/api/v1/users/me')).body.data as { name: string };
    expect(await native.innerText()).not.to.include(owner.name);
    await app.page.getByRole('article', { name: /^Disk alerts: Disk 90% full/ }).waitFor();
    // The icon emoji's glyph from the fallback font, before the picture is taken.
    await app.page.evaluate(() => document.fonts.load('20px "Noto Emoji"', '⚠').then(() => undefined));
    const problems: string[] = [];
    await axeAt(app.page, 'hook desktop', problems);
    await screenshot(app.page, 'agents-hook-posts');
    app.assertClean();
    expect(problems).to.deep.equal([]);
  });
});


describe('web app: agents, the rules without a browser', () => {
  it('completes a command only while its name is typed at the start; a command is its name and the rest', () => {
    expect(commandQuery('/')).to.equal('');
    expect(commandQuery('/De')).to.equal('de');
    expect(commandQuery('/deploy ')).to.equal(null);
    expect(commandQuery('say /deploy')).to.equal(null);
    expect(parseCommand('/deploy  staging now ')).to.deep.equal({ name: 'deploy', text: 'staging now' });
    expect(parseCommand('/rollback')).to.deep.equal({ name: 'rollback', text: '' });
    expect(parseCommand('/usr/bin is a path')).to.equal(null);
    expect(parseCommand(' /deploy now')).to.equal(null);
    expect(parseCommand('hello /deploy')).to.equal(null);
    const commands = ['rollback', 'deploy', 'deploy-prod'].map((name) => ({ name, description: '', usage: null, user_id: 'u' }));
    expect(matchCommands(commands, 'dep').map((c) => c.name)).to.deep.equal(['deploy', 'deploy-prod']);
    expect(matchCommands(commands, '').map((c) => c.name)).to.deep.equal(['deploy', 'deploy-prod', 'rollback']);
  });
});

describe('web app: agents at level 2', function () {
  this.timeout(120_000);
  const b = suiteBrowser();

  it('offers no commands and posts text starting with / as a message; keys have no limits to choose', async () => {
    const ws = await newWorkspace(stack());
    const ch = await channelWith(ws, []);
    const app = await signedIn(b, stack().url, ws.ownerKey, `/c/${ch.id}`);
    const box = app.page.getByRole('textbox', { name: `Message #${ch.name}` });
    await box.click();
    await box.pressSequentially('/deploy now');
    expect(await app.page.getByRole('listbox', { name: 'Commands' }).count()).to.equal(0);
    await box.press('Enter');
    await app.page.getByRole('article', { name: /\/deploy now/ }).and(app.page.locator('[data-state="sent"]')).waitFor();
    await app.page.goto('/settings');
    await app.page.getByRole('button', { name: 'Create key' }).waitFor();
    expect(await app.page.getByText('Limit what the key can do').count()).to.equal(0);
    app.assertClean();
  });
});
