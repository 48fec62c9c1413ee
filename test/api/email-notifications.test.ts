// Email for the ones who are away (contract §14, level 3), against a real SMTP
// server (smtp-server, on a spare port, removed after): one email for several
// unread mentions, none while a stream is open, none once unsubscribed
// (RFC 8058 one-click POST), links that open the messages; invites and
// password resets mailed too. The stack's EMAIL_NOTIFY_DELAY is 1 s.
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { expectError, expectOk } from '../support/expect.js';
import { waitFor } from '../support/files.js';
import { Client, serverLevels } from '../support/client.js';
import { separateStack } from '../support/separate-stack.js';
import { level3Stack, newWorkspace, uniqueName, type TestWorkspace } from '../support/stack.js';
import { uniqueEmail } from '../support/sign-in.js';
import { openRaw, type RawStream } from '../support/sse.js';
import { notifyAway, unsubscribeUrl } from '../../services/core/email/email.notify.js';
import type { Stack } from '../../services/stack.js';

interface Received {
  to: string;
  auth: string | null;
  mail: ParsedMail;
}

async function smtpServer() {
  const received: Received[] = [];
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authOptional: false,
    onAuth(auth, _session, callback) {
      if (auth.username === 'mailer' && auth.password === 's3cret pass') callback(null, { user: auth.username });
      else callback(new Error('bad credentials'));
    },
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((mail) => {
          for (const rcpt of session.envelope.rcptTo) received.push({ to: rcpt.address, auth: (session.user as string | undefined) ?? null, mail });
          callback();
        })
        .catch(callback);
    },
    logger: false,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return { port, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('email for the ones who are away (level 3)', function () {
  this.timeout(60_000);
  let smtp: Awaited<ReturnType<typeof smtpServer>>;
  let mailing: Awaited<ReturnType<typeof separateStack>>;
  let s: Stack;
  let ws: TestWorkspace;
  let channelId: string;
  const streams: RawStream[] = [];

  before(async () => {
    smtp = await smtpServer();
    mailing = await separateStack({
      FEATURE_LEVEL: '3',
      SMTP_URL: `smtp://mailer:${encodeURIComponent('s3cret pass')}@127.0.0.1:${smtp.port}`,
      MAIL_FROM: 'Axid <axid@example.test>',
      EMAIL_NOTIFY_DELAY: '1',
    });
    s = mailing.stack;
    serverLevels.set(s.url, '3');
  });
  after(async () => {
    for (const stream of streams.splice(0)) stream.close();
    if (mailing) {
      serverLevels.delete(s.url);
      await mailing.stop();
    }
    await smtp?.close();
  });
  beforeEach(async () => {
    ws = await newWorkspace(s);
    channelId = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('team') }), 201).data.id;
  });

  /** A member of the channel with an email address. */
  async function person() {
    const u = await ws.user();
    const email = uniqueEmail('away');
    expectOk(await ws.owner.patch(`/api/v1/workspaces/current/members/${u.id}`, { email }));
    expectOk(await ws.owner.post(`/api/v1/channels/${channelId}/members`, { user_id: u.id }), 201);
    return { ...u, email };
  }
  const mention = async (userId: string, text: string) =>
    expectOk(
      await ws.owner.post(`/api/v1/channels/${channelId}/messages`, {
        content: `${text} @someone`,
        content_json: { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: `${text} ` }, { type: 'mention', attrs: { id: userId } }] }] },
      }),
      201,
    ).data;
  const mailsTo = (address: string) => smtp.received.filter((r) => r.to === address);
  /** Waits until the scan has read the message (so what follows is decided), then runs the job once more. */
  async function scannedAndRun(messageId: string) {
    const { seq, workspace_id } = await s.rt.db('messages').where({ id: messageId }).first('seq', 'workspace_id');
    await waitFor(async () => {
      const scan = await s.rt.db('email_scan').where({ workspace_id }).first('seq');
      return scan && BigInt(scan.seq) >= BigInt(seq);
    }, 'the scan to pass the message');
    await notifyAway(s.rt, {}, { lastAttempt: true } as never);
  }

  it('sends one email for three unread mentions to a person who is away, with links that open the messages', async () => {
    const away = await person();
    // Online while the three arrive (the scan keeps them, no email goes), then away: one email for all three,
    // however slowly a loaded machine posts them.
    const presenceKey = `{${s.rt.config.redisKeyPrefix}presence}:ws:${ws.workspaceId}`;
    const stream = await openRaw(s.url, away.key);
    await waitFor(async () => (await s.rt.redis.sismember(presenceKey, away.id)) === 1, 'presence');
    const posted = [];
    for (const text of ['First <b>ping</b> & more', 'Second ping', 'Third ping']) posted.push(await mention(away.id, text));
    await scannedAndRun(posted[2]!.id);
    expect(mailsTo(away.email)).to.have.length(0);
    stream.close();
    await waitFor(async () => (await s.rt.redis.sismember(presenceKey, away.id)) === 0, 'away');
    const [received] = await waitFor(async () => (mailsTo(away.email).length > 0 ? mailsTo(away.email) : null), 'the email');
    const mail = received!.mail;
    expect(received!.auth).to.equal('mailer');
    expect(mail.from?.text).to.include('axid@example.test');
    expect(mail.subject).to.include('3 new messages');
    for (const m of posted) {
      const link = `${s.rt.config.publicBaseUrl}/c/${channelId}/m/${m.id}`;
      expect(mail.text).to.include(link);
      expect(mail.html).to.include(`href="${link}"`);
      // The permalink names the conversation and the message, which the person reads through the API.
      const [, conversation, , messageId] = new URL(link).pathname.split('/').slice(1);
      expect(expectOk(await away.client.get(`/api/v1/channels/${conversation}/messages/${messageId}`)).data.id).to.equal(m.id);
      // The web app answers the address itself.
      expect((await fetch(s.url + new URL(link).pathname)).status).to.equal(200);
    }
    // Plain text and HTML, the HTML escaped.
    expect(mail.text).to.include('First <b>ping</b> & more');
    expect(mail.html).to.include('First &lt;b&gt;ping&lt;/b&gt; &amp; more');
    expect(mail.html).to.not.include('<b>ping</b>');
    // One-click unsubscribe (RFC 8058).
    const header = (name: string) => mail.headerLines.find((h) => h.key === name)?.line ?? '';
    expect(header('list-unsubscribe-post')).to.equal('List-Unsubscribe-Post: List-Unsubscribe=One-Click');
    const unsubscribe = /<([^>]+)>/.exec(header('list-unsubscribe'))?.[1] ?? '';
    expect(unsubscribe).to.include(`${s.rt.config.publicBaseUrl}/api/v1/email/unsubscribe?token=`);
    // It is the person's own: POSTed, their emails are off.
    expectOk(await new Client(s.url).post(`/api/v1/email/unsubscribe${new URL(unsubscribe).search}`, 'List-Unsubscribe=One-Click', { 'content-type': 'application/x-www-form-urlencoded' }));
    expect(expectOk(await away.client.get('/api/v1/users/me')).data.email_notifications).to.equal('never');
    expectOk(await away.client.patch('/api/v1/users/me', { email_notifications: 'mentions' }));
    // A fourth mention within 15 minutes waits: still one email.
    const fourth = await mention(away.id, 'Fourth ping');
    await scannedAndRun(fourth.id);
    expect(mailsTo(away.email)).to.have.length(1);
  });

  it('sends nothing to a person whose stream is open', async () => {
    const here = await person();
    const stream = await openRaw(s.url, here.key);
    streams.push(stream);
    await waitFor(async () => (await s.rt.redis.sismember(`{${s.rt.config.redisKeyPrefix}presence}:ws:${ws.workspaceId}`, here.id)) === 1, 'presence');
    const m = await mention(here.id, 'You are here');
    await scannedAndRun(m.id);
    expect(mailsTo(here.email)).to.have.length(0);
  });

  it('sends nothing to a person who read the message, nor to one who turned emails off (PATCH /users/me)', async () => {
    const reader = await person();
    const off = await person();
    expect(expectOk(await off.client.get('/api/v1/users/me')).data.email_notifications).to.equal('mentions');
    expect(expectOk(await off.client.patch('/api/v1/users/me', { email_notifications: 'never' })).data.email_notifications).to.equal('never');
    expectError(await off.client.patch('/api/v1/users/me', { email_notifications: 'always' }), 400, 'validation_error');
    const read = await mention(reader.id, 'Read me');
    expectOk(await reader.client.post(`/api/v1/channels/${channelId}/read`, { message_id: read.id }), 204);
    const m = await mention(off.id, 'Not mailed');
    await scannedAndRun(read.id);
    await scannedAndRun(m.id);
    expect(mailsTo(reader.email)).to.have.length(0);
    expect(mailsTo(off.email)).to.have.length(0);
  });

  it('turns emails off with the one-click POST of List-Unsubscribe; a forged token is refused', async () => {
    const leaving = await person();
    const url = new URL(await unsubscribeUrl(s.rt, leaving.id));
    const anon = new Client(s.url);
    const forged = new URL(await unsubscribeUrl(s.rt, (await person()).id));
    const forgedToken = `${leaving.id}.${forged.searchParams.get('token')!.split('.')[1]}`;
    expectError(await anon.post(`/api/v1/email/unsubscribe?token=${encodeURIComponent(forgedToken)}`, 'List-Unsubscribe=One-Click', { 'content-type': 'application/x-www-form-urlencoded' }), 403, 'forbidden');
    expectError(await anon.post('/api/v1/email/unsubscribe?token=nonsense', 'List-Unsubscribe=One-Click', { 'content-type': 'application/x-www-form-urlencoded' }), 403, 'forbidden');
    const done = await anon.post(`/api/v1/email/unsubscribe${url.search}`, 'List-Unsubscribe=One-Click', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(expectOk(done).data).to.deep.equal({ email_notifications: 'never' });
    expect(expectOk(await leaving.client.get('/api/v1/users/me')).data.email_notifications).to.equal('never');
    const m = await mention(leaving.id, 'After unsubscribing');
    await scannedAndRun(m.id);
    expect(mailsTo(leaving.email)).to.have.length(0);
  });

  it('mails an invite with an email and a password reset link, which the answers still show', async () => {
    const invited = uniqueEmail('invited');
    const invite = expectOk(await ws.owner.post('/api/v1/invites', { email: invited }), 201).data;
    const [inviteMail] = await waitFor(async () => (mailsTo(invited).length > 0 ? mailsTo(invited) : null), 'the invite email');
    expect(inviteMail!.mail.text).to.include(invite.url);
    expect(inviteMail!.mail.html).to.include(invite.url);
    const forgetful = await person();
    const reset = expectOk(await ws.owner.post(`/api/v1/workspaces/current/members/${forgetful.id}/password-reset`), 201).data;
    const [resetMail] = await waitFor(async () => (mailsTo(forgetful.email).length > 0 ? mailsTo(forgetful.email) : null), 'the reset email');
    expect(resetMail!.mail.text).to.include(reset.url);
  });
});

describe('email without SMTP_URL (level 3)', () => {
  it('sends nothing and fails nothing: invites with an email and resets answer as before', async () => {
    const s = await level3Stack();
    const ws = await newWorkspace(s);
    expect(s.rt.config.email).to.equal(null);
    expectOk(await ws.owner.post('/api/v1/invites', { email: uniqueEmail('nomail') }), 201);
    const u = await ws.user();
    expectOk(await ws.owner.patch(`/api/v1/workspaces/current/members/${u.id}`, { email: uniqueEmail('nomail') }));
    expectOk(await ws.owner.post(`/api/v1/workspaces/current/members/${u.id}/password-reset`), 201);
    expect(expectOk(await u.client.patch('/api/v1/users/me', { email_notifications: 'never' })).data.email_notifications).to.equal('never');
  });
});
