// The web app's level-3 "later" features, used as a person would (issue 34):
// "Schedule for later" on send and the list of scheduled messages (edit, send
// now, delete), "Remind me" on a message and the list of reminders (the
// reminder arriving from "Axid"), the email notification setting, and the
// owner's Slack import (upload, progress, report). The browser runs in a time
// zone far from the server's, so "tomorrow at 9" must be the person's 9:00.
// The stack runs with SCHEDULE_MIN_LEAD_SECONDS=1 (the test-only knob of
// shared/config.ts) so that what the worker sends arrives within seconds.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import type { Stack } from '../../services/stack.js';
import { serverLevels } from '../support/client.js';
import { sampleExport, SAMPLE_COUNTS, writeZip } from '../support/slack-export.js';
import { separateStack } from '../support/separate-stack.js';
import { newWorkspace, uniqueName, type TestWorkspace } from '../support/stack.js';
import { axeProblems, openTab, screenshot, suiteBrowser, type AppPage } from './browser.js';
import type { Page } from 'playwright-core';

const ZONE = 'Pacific/Auckland';
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

describe('web app: schedule for later, remind me, email settings, Slack import (level 3)', function () {
  this.timeout(180_000);
  const b = suiteBrowser();
  let separate: Awaited<ReturnType<typeof separateStack>> | undefined;
  let s: Stack;
  let ws: TestWorkspace;

  before(async () => {
    separate = await separateStack({ FEATURE_LEVEL: '3', SCHEDULE_MIN_LEAD_SECONDS: '1' });
    s = separate.stack;
    serverLevels.set(s.url, '3');
  });
  after(async () => {
    serverLevels.delete(s?.url);
    await separate?.stop();
  });
  beforeEach(async () => {
    ws = await newWorkspace(s);
  });

  /** Signed in through a one-time link (as browser.ts's signedIn), in a browser whose clock reads New Zealand time. */
  async function signedIn(key: string, urlPath: string, viewport = DESKTOP, colorScheme: 'light' | 'dark' = 'light'): Promise<AppPage> {
    const made = await fetch(`${s.url}/api/v1/api-keys`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Sign-in link (test)' }) });
    const linkKey = ((await made.json()) as { data: { key: string } }).data.key;
    const context = await b.browser.newContext({ viewport, baseURL: s.url, colorScheme, timezoneId: ZONE });
    const app = await openTab(context, `${urlPath}#key=${encodeURIComponent(linkKey)}`);
    await app.page.locator('[data-stream-state="live"], .settings').first().waitFor({ state: 'attached' });
    // Confirmations (delete) are accepted, as a person would.
    app.page.on('dialog', (d) => void d.accept());
    return app;
  }

  async function checkScreen(page: Page, name: string, problems: string[]) {
    for (const p of await axeProblems(page)) problems.push(`${name}: ${p}`);
    await screenshot(page, name);
  }

  // (No named functions inside page.evaluate: tsx's helper for their names does not exist in the page.)
  /** The browser's reading of an instant: its local day offset from today, hour and minute. */
  const local = (page: Page, iso: string) =>
    page.evaluate((at) => {
      const d = new Date(at);
      const now = new Date();
      const days = Math.round((new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime() - new Date(now.getFullYear(), now.getMonth(), now.getDate()).getTime()) / 86_400_000);
      return { days, hour: d.getHours(), minute: d.getMinutes() };
    }, iso);

  /** A datetime-local value `days` from today at hh:mm, in the browser's zone. */
  const localValue = async (page: Page, days: number, hh: number, mm: number) => {
    const [y, m, d] = await page.evaluate((n) => {
      const at = new Date();
      at.setDate(at.getDate() + n);
      return [at.getFullYear(), at.getMonth() + 1, at.getDate()];
    }, days);
    const two = (n: number) => String(n).padStart(2, '0');
    return `${y}-${two(m!)}-${two(d!)}T${two(hh)}:${two(mm)}`;
  };

  const scheduled = async () => (await ws.owner.get('/api/v1/scheduled-messages')).body.data as { id: string; content: string; send_at: string; status: string; conversation_id: string }[];

  it('schedules a message for tomorrow at 9 or a custom time in the person\'s zone; the list edits, sends now and deletes; one the worker sends leaves the list', async () => {
    const ch = (await ws.owner.post('/api/v1/channels', { name: uniqueName('plans') })).body.data as { id: string; name: string };
    const app = await signedIn(ws.ownerKey, `/c/${ch.id}`);
    const page = app.page;
    const problems: string[] = [];
    const box = page.getByRole('textbox', { name: `Message #${ch.name}` });
    const scheduleButton = page.getByRole('button', { name: 'Schedule for later' });
    expect(await scheduleButton.isDisabled(), 'nothing to schedule yet').to.equal(true);

    // Tomorrow at 9, from the menu beside Send.
    await box.fill('Standup notes, first thing');
    await scheduleButton.click();
    const menu = page.getByRole('dialog', { name: 'Schedule message' });
    await menu.getByRole('button', { name: /^Tomorrow at 9:00/ }).waitFor();
    await checkScreen(page, 'web-schedule-menu', problems);
    await menu.getByRole('button', { name: /^Tomorrow at 9:00/ }).click();
    await menu.waitFor({ state: 'detached' });
    expect(await box.inputValue(), 'the composer is emptied').to.equal('');
    await page.getByText(/1 message scheduled for Tomorrow at 9:00/).waitFor();
    const [first] = await scheduled();
    expect(first).to.include({ content: 'Standup notes, first thing', status: 'scheduled', conversation_id: ch.id });
    expect(await local(page, first!.send_at)).to.include({ days: 1, hour: 9, minute: 0 });
    expect(await page.getByRole('article', { name: /Standup notes/ }).count(), 'not posted now').to.equal(0);

    // A custom time: in the past is refused in words; the day after tomorrow at 14:30 (the browser's zone) is taken.
    await box.fill('Retro reminder for **everyone**');
    await scheduleButton.click();
    const custom = menu.getByLabel('Custom date and time');
    await custom.fill(await localValue(page, -1, 10, 0));
    await menu.getByRole('button', { name: 'Schedule message' }).click();
    await menu.getByRole('alert').filter({ hasText: 'Choose a time at least a minute from now.' }).waitFor();
    await custom.fill(await localValue(page, 2, 14, 30));
    await menu.getByRole('button', { name: 'Schedule message' }).click();
    await menu.waitFor({ state: 'detached' });
    await page.getByText('2 scheduled messages').waitFor();
    const retro = (await scheduled()).find((m) => m.content.startsWith('Retro'))!;
    expect(await local(page, retro.send_at)).to.include({ days: 2, hour: 14, minute: 30 });

    // The list of all: edit one's text and time, send the other now, then delete.
    await page.getByRole('button', { name: 'See all scheduled messages' }).click();
    const list = page.getByRole('dialog', { name: 'Scheduled messages and reminders' });
    const items = list.getByRole('listitem', { name: `Scheduled message to #${ch.name}` });
    await items.nth(1).waitFor();
    expect(await items.nth(0).textContent(), 'soonest first').to.contain('Standup notes');
    await checkScreen(page, 'web-scheduled-list', problems);
    await items.nth(0).getByRole('button', { name: 'Edit' }).click();
    await items.nth(0).getByLabel('Message').fill('Standup notes, edited');
    await items.nth(0).getByLabel('Send at').fill(await localValue(page, 3, 8, 15));
    await items.nth(0).getByRole('button', { name: 'Save' }).click();
    // Now the later of the two: the retro comes first.
    await items.nth(1).getByText('Standup notes, edited').waitFor();
    const edited = (await scheduled()).find((m) => m.id === first!.id)!;
    expect(edited.content).to.equal('Standup notes, edited');
    expect(await local(page, edited.send_at)).to.include({ days: 3, hour: 8, minute: 15 });

    await items.nth(0).getByRole('button', { name: 'Send now' }).click();
    await page.getByRole('log').getByRole('article', { name: /Retro reminder for/ }).locator('strong', { hasText: 'everyone' }).waitFor({ state: 'attached' });
    expect((await scheduled()).map((m) => m.id), 'taken off the schedule').to.deep.equal([first!.id]);
    await items.first().getByRole('button', { name: 'Delete' }).click();
    await list.getByText('Nothing scheduled.', { exact: false }).waitFor();
    expect(await scheduled()).to.deep.equal([]);
    await page.keyboard.press('Escape');
    await list.waitFor({ state: 'detached' });

    // One the worker sends in two seconds (made through the API: the app asks for a minute at least) leaves the indicator and appears.
    await ws.owner.post(`/api/v1/channels/${ch.id}/messages`, { content: 'Sent by the worker', send_at: new Date(Date.now() + 2_000).toISOString() });
    await page.getByRole('button', { name: 'Scheduled and reminders' }).click();
    await list.getByRole('listitem', { name: `Scheduled message to #${ch.name}` }).getByText('Sent by the worker').waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('log').getByRole('article', { name: /Sent by the worker/ }).waitFor();
    await page.getByText(/message scheduled for/).waitFor({ state: 'detached', timeout: 20_000 });

    // At phone width the button fits beside Send, and the menu is usable.
    const phone = await signedIn(ws.ownerKey, `/c/${ch.id}`, PHONE, 'dark');
    await phone.page.getByRole('textbox', { name: `Message #${ch.name}` }).fill('From the phone');
    await phone.page.getByRole('button', { name: 'Schedule for later' }).click();
    await phone.page.getByRole('dialog', { name: 'Schedule message' }).getByRole('button', { name: /^Tomorrow at/ }).waitFor();
    await checkScreen(phone.page, 'web-schedule-menu-phone', problems);
    await phone.page.keyboard.press('Escape');
    await phone.page.getByRole('button', { name: 'Show conversations' }).click();
    await phone.page.getByRole('button', { name: 'Scheduled and reminders' }).click();
    await phone.page.getByRole('dialog', { name: 'Scheduled messages and reminders' }).getByRole('tab', { name: 'Scheduled messages' }).waitFor();
    await checkScreen(phone.page, 'web-scheduled-list-phone', problems);
    expect(problems).to.deep.equal([]);
    app.assertClean();
    phone.assertClean();
  });

  it('"Remind me" on a message: presets and a custom time, the list with delete; the reminder arrives as a DM from Axid linking the message', async () => {
    const bob = await ws.user({ name: uniqueName('bob') });
    const ch = (await ws.owner.post('/api/v1/channels', { name: uniqueName('ops') })).body.data as { id: string; name: string };
    await ws.owner.post(`/api/v1/channels/${ch.id}/members`, { user_id: bob.id });
    const posted = (await bob.client.post(`/api/v1/channels/${ch.id}/messages`, { content: 'Please review the rollout plan' })).body.data as { id: string };
    const app = await signedIn(ws.ownerKey, `/c/${ch.id}`);
    const page = app.page;
    const problems: string[] = [];
    const reminderList = async () => (await ws.owner.get('/api/v1/reminders')).body.data as { id: string; message_id: string | null; remind_at: string; status: string }[];
    const message = page.getByRole('article', { name: /Please review the rollout plan/ });
    const openRemind = async () => {
      await message.hover();
      await message.getByRole('button', { name: 'Remind me about this message' }).click();
      return page.getByRole('dialog', { name: 'Remind me about this message' });
    };

    let dialog = await openRemind();
    for (const label of ['In 20 minutes', 'In 1 hour', /^Tomorrow at 9:00/]) await dialog.getByRole('button', { name: label }).waitFor();
    await checkScreen(page, 'web-remind-me', problems);
    const before = Date.now();
    await dialog.getByRole('button', { name: 'In 1 hour' }).click();
    await dialog.getByRole('status').filter({ hasText: /^I will remind you / }).waitFor();
    const [r] = await reminderList();
    expect(r).to.include({ message_id: posted.id, status: 'scheduled' });
    const ahead = Date.parse(r!.remind_at) - before;
    expect(ahead).to.be.within(3_590_000, 3_700_000);
    await dialog.getByRole('button', { name: 'Done' }).click();

    // A custom time, in the browser's zone.
    dialog = await openRemind();
    await dialog.getByLabel('Custom date and time').fill(await localValue(page, 2, 10, 15));
    await dialog.getByRole('button', { name: 'Set reminder' }).click();
    await dialog.getByRole('status').filter({ hasText: /^I will remind you on / }).waitFor();
    const custom = (await reminderList()).find((x) => x.id !== r!.id)!;
    expect(await local(page, custom.remind_at)).to.include({ days: 2, hour: 10, minute: 15 });

    // The list: both, soonest first; one deleted.
    await dialog.getByRole('button', { name: 'See all reminders' }).click();
    const list = page.getByRole('dialog', { name: 'Scheduled messages and reminders' });
    expect(await list.getByRole('tab', { name: 'Reminders' }).getAttribute('aria-selected')).to.equal('true');
    const items = list.getByRole('listitem', { name: /^Reminder / });
    await items.nth(1).waitFor();
    await items.nth(0).getByRole('link', { name: `A message in #${ch.name}` }).waitFor();
    await checkScreen(page, 'web-reminders-list', problems);
    await items.nth(1).getByRole('button', { name: 'Delete' }).click();
    await items.nth(1).waitFor({ state: 'detached' });
    expect((await reminderList()).map((x) => x.id)).to.deep.equal([r!.id]);
    await page.keyboard.press('Escape');

    // Due in two seconds (through the API: the app asks for a minute at least): Axid's DM arrives live, marked as a reminder, linking the message.
    await ws.owner.post('/api/v1/reminders', { remind_at: new Date(Date.now() + 2_000).toISOString(), message_id: posted.id });
    const dm = page.getByRole('navigation', { name: 'Conversations' }).getByRole('link', { name: /^Axid, bot/ });
    await dm.waitFor({ timeout: 30_000 });
    await dm.click();
    const arrived = page.getByRole('log').getByRole('article').filter({ hasText: 'Reminder' });
    await arrived.waitFor();
    await checkScreen(page, 'web-reminder-arrived', problems);
    // Its "Open the message" opens the message in the app, highlighted.
    await arrived.getByRole('link', { name: 'Open the message' }).click();
    await page.getByRole('article', { name: /Please review the rollout plan/ }).and(page.locator('[aria-current="true"]')).waitFor();
    expect(new URL(page.url()).pathname).to.equal(`/c/${ch.id}/m/${posted.id}`);
    expect((await reminderList()).find((x) => x.id !== r!.id)?.status, 'the API says it was sent').to.equal('sent');

    // At phone width.
    const phone = await signedIn(ws.ownerKey, `/c/${ch.id}`, PHONE, 'dark');
    const phoneMessage = phone.page.getByRole('article', { name: /Please review the rollout plan/ });
    await phoneMessage.hover();
    await phoneMessage.getByRole('button', { name: 'Remind me about this message' }).click();
    await phone.page.getByRole('dialog', { name: 'Remind me about this message' }).getByRole('button', { name: 'In 20 minutes' }).waitFor();
    await checkScreen(phone.page, 'web-remind-me-phone', problems);
    expect(problems).to.deep.equal([]);
    app.assertClean();
    phone.assertClean();
  });

  it('email notifications are set in Preferences and follow the person; only owners see the import screen', async () => {
    await s.rt.db('users').where({ id: ws.ownerId }).update({ email: `${uniqueName('owner')}@example.com` });
    const problems: string[] = [];
    const app = await signedIn(ws.ownerKey, '/settings');
    const page = app.page;
    await page.getByRole('tab', { name: 'Preferences' }).click();
    const group = page.getByRole('group', { name: 'Email me' });
    expect(await group.getByRole('radio', { name: 'About mentions and direct messages I missed' }).isChecked()).to.equal(true);
    await group.getByRole('radio', { name: 'Never' }).check();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect((await ws.owner.get('/api/v1/users/me')).body.data.email_notifications).to.equal('never');
    await page.getByRole('heading', { name: 'Email notifications' }).scrollIntoViewIfNeeded();
    await checkScreen(page, 'web-email-settings', problems);
    // Another device sees the choice (it is the person's, on the server).
    const other = await signedIn(ws.ownerKey, '/settings', PHONE, 'dark');
    await other.page.getByRole('tab', { name: 'Preferences' }).click();
    expect(await other.page.getByRole('group', { name: 'Email me' }).getByRole('radio', { name: 'Never' }).isChecked()).to.equal(true);
    await other.page.getByRole('heading', { name: 'Email notifications' }).scrollIntoViewIfNeeded();
    await checkScreen(other.page, 'web-email-settings-phone', problems);
    await other.page.getByRole('group', { name: 'Email me' }).getByRole('radio', { name: 'About mentions and direct messages I missed' }).check();
    await other.page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect((await ws.owner.get('/api/v1/users/me')).body.data.email_notifications).to.equal('mentions');
    expect(await page.getByRole('tab', { name: 'Import from Slack' }).count(), 'the owner has it').to.equal(1);

    // Admins (the API answers them 403) and members have no import screen.
    for (const role of ['admin', 'member'] as const) {
      const u = await ws.user({ role });
      const theirs = await signedIn(u.key, '/settings');
      await theirs.page.getByRole('tab', { name: 'Preferences' }).waitFor();
      expect(await theirs.page.getByRole('tab', { name: 'Import from Slack' }).count(), role).to.equal(0);
      theirs.assertClean();
      await theirs.context.close();
    }
    expect(problems).to.deep.equal([]);
    app.assertClean();
    other.assertClean();
  });

  it('the owner uploads a Slack export, follows it and reads the report; a broken export says which file', async () => {
    const zip = readFileSync(await writeZip(sampleExport()));
    const problems: string[] = [];
    const app = await signedIn(ws.ownerKey, '/settings');
    const page = app.page;
    const polls: string[] = [];
    page.on('request', (r) => /\/api\/v1\/imports\/[^/]+$/.test(r.url()) && r.method() === 'GET' && polls.push(r.url()));
    await page.getByRole('tab', { name: 'Import from Slack' }).click();
    const start = page.getByRole('button', { name: 'Start import' });
    await start.waitFor();
    expect(await start.isDisabled(), 'no file yet').to.equal(true);
    await checkScreen(page, 'web-import-empty', problems);
    await page.getByLabel('Slack export (ZIP)').setInputFiles({ name: 'slack-export.zip', mimeType: 'application/zip', buffer: zip });
    await start.click();
    const state = page.getByRole('region', { name: 'Import' });
    await state.getByRole('status').filter({ hasText: 'Import finished' }).waitFor({ timeout: 60_000 });
    expect(polls.length, 'the import was followed').to.be.greaterThan(0);
    const counts = state.getByRole('definition');
    const shown = await counts.allTextContents();
    expect(shown).to.deep.equal(Object.values({ ...SAMPLE_COUNTS, files: 0 }).map((n) => n.toLocaleString('en-US')));
    await state.getByRole('heading', { name: /^Skipped \(\d+\)$/ }).waitFor();
    await state.getByText('general/2024-01-02.json 1704186400.000400 file F001 spec.txt').waitFor();
    await state.getByRole('heading', { name: 'Slack system messages not imported' }).waitFor();
    await checkScreen(page, 'web-import-report', problems);
    // The import wrote the channels the person now sees in the chat.
    const channels = (await ws.owner.get('/api/v1/channels?limit=100')).body.data.map((c: { name: string }) => c.name);
    expect(channels).to.include.members(['general', 'random']);

    // Opened again later (another tab of this browser, at phone width in the dark), the last import's report is there.
    const again = await openTab(app.context, '/settings');
    await again.page.setViewportSize(PHONE);
    await again.page.emulateMedia({ colorScheme: 'dark' });
    await again.page.getByRole('tab', { name: 'Import from Slack' }).click();
    await again.page.getByRole('region', { name: 'Import' }).getByRole('status').filter({ hasText: 'Import finished' }).waitFor();
    await checkScreen(again.page, 'web-import-phone', problems);
    again.assertClean();
    await again.page.close();

    // A broken export fails, naming the file.
    const broken = readFileSync(await writeZip({ ...sampleExport(), 'random/2024-01-01.json': 'not json' }));
    await page.getByLabel('Slack export (ZIP)').setInputFiles({ name: 'broken.zip', mimeType: 'application/zip', buffer: broken });
    await start.click();
    await state.getByRole('status').filter({ hasText: /The import failed; nothing more was written\. random\/2024-01-01\.json: is not valid JSON/ }).waitFor({ timeout: 60_000 });
    await state.getByRole('heading', { name: 'Import failed' }).waitFor();

    expect(problems).to.deep.equal([]);
    app.assertClean();
  });
});
