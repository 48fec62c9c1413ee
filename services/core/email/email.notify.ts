// `email.notify_away` (repeating, level 3, only with SMTP_URL and MAIL_FROM):
// a person with an email who has an unread mention or DM older than
// EMAIL_NOTIFY_DELAY and no open stream gets one email listing what they
// missed, at most one per 15 minutes (contract §14). Two steps a run:
// 1. in each workspace where someone wants email, the messages after its
//    cursor (messages_workspace_seq), up to the first one younger than the
//    delay, each read once: their mentioned people and, in a DM,
//    its members (never the author) become pending pairs, kept only for
//    people who want email and have not read the message;
// 2. people with pending pairs and no email in 15 minutes: online ones
//    (a stream open on any gateway: presence) are left for later; for the
//    others, what is still unread is mailed and the pairs are cleared.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { JobHandler } from '../../../shared/jobs.js';
import type { Runtime } from '../../../shared/runtime.js';
import { AppError } from '../../../shared/errors.js';
import { sendMail } from './email.mailer.js';
import { missedMessagesMail } from './email.render.js';
import * as store from './email.store.js';

const SCAN_BATCH = 1000;
const PEOPLE_BATCH = 100;
const MESSAGES_PER_EMAIL = 50;
/** At most one email per person per this many minutes. */
export const EMAIL_GAP_MINUTES = 15;

/** Presence's set of a workspace's online people (services/gateway/presence.ts keeps it). */
const onlineKey = (rt: Runtime, workspaceId: string) => `{${rt.config.redisKeyPrefix}presence}:ws:${workspaceId}`;

export const notifyAway: JobHandler<'email.notify_away'> = async (rt) => {
  if (!rt.config.email) return;
  for (const workspaceId of await store.workspacesToScan(rt.db)) while ((await collectPending(rt, workspaceId)) === SCAN_BATCH);
  await emailDuePeople(rt);
};

/** Step 1; returns how many messages were read. */
async function collectPending(rt: Runtime, workspaceId: string): Promise<number> {
  const delayMs = rt.config.email!.notifyDelaySeconds * 1000;
  return rt.db.transaction(async (trx) => {
    // Started a few delays back (at least an hour): nothing recent is skipped, no old history mailed.
    const seq = await store.lockScan(trx, workspaceId, Math.max(3600, 4 * rt.config.email!.notifyDelaySeconds));
    if (seq === null) return 0; // another worker scans it now
    const scanned = await store.messagesAfter(trx, workspaceId, seq, SCAN_BATCH);
    const cutoff = Date.now() - delayMs;
    const firstYoung = scanned.findIndex((m) => m.created_at.getTime() > cutoff);
    const due = firstYoung === -1 ? scanned : scanned.slice(0, firstYoung);
    if (due.length === 0) return 0;
    const dms = [...new Set(due.filter((m) => m.kind !== 'channel').map((m) => m.channel_id))];
    const members = new Map<string, string[]>();
    for (const row of await store.membersOf(trx, dms)) members.set(row.channel_id, [...(members.get(row.channel_id) ?? []), row.user_id]);
    const pairs: { user_id: string; message_id: string }[] = [];
    for (const m of due) {
      const people = new Set([...(m.mentioned_user_ids ?? []), ...(m.kind === 'channel' ? [] : (members.get(m.channel_id) ?? []))]);
      if (m.author_id) people.delete(m.author_id);
      for (const user_id of people) pairs.push({ user_id, message_id: m.id });
    }
    await store.addPending(trx, pairs);
    await store.setScan(trx, workspaceId, due[due.length - 1]!.seq);
    return firstYoung === -1 ? scanned.length : 0;
  });
}

/** Step 2. */
async function emailDuePeople(rt: Runtime): Promise<void> {
  // Every due person each run, a page at a time: people who stay online never crowd out the others.
  let after: string | null = null;
  for (;;) {
    const people = await store.duePeople(rt.db, EMAIL_GAP_MINUTES, after, PEOPLE_BATCH);
    for (const person of people) await emailPerson(rt, person);
    if (people.length < PEOPLE_BATCH) return;
    after = people[people.length - 1]!.id;
  }
}

async function emailPerson(rt: Runtime, person: { id: string; workspace_id: string }): Promise<void> {
  if ((await rt.redis.sismember(onlineKey(rt, person.workspace_id), person.id)) === 1) return;
  try {
    await rt.db.transaction(async (trx) => {
      const user = await store.lockDuePerson(trx, person.id, EMAIL_GAP_MINUTES);
      if (!user) return;
      const missed = await store.unreadPending(trx, user.id, MESSAGES_PER_EMAIL);
      if (missed.length > 0) {
        const base = rt.config.publicBaseUrl;
        const mail = missedMessagesMail({
          workspace: user.workspace_name,
          messages: missed.map((m) => ({
            author: m.author_display_name || m.author_name || 'An integration',
            conversation: m.kind === 'channel' ? `#${m.channel_name}` : 'a direct message',
            text: m.content,
            permalink: `${base}/c/${encodeURIComponent(m.channel_id)}/m/${encodeURIComponent(m.id)}`,
          })),
          settingsUrl: `${base}/settings`,
        });
        // Sent before the commit: a failure rolls back, and the next run tries again.
        await sendMail(rt, { to: user.email, ...mail, headers: { 'List-Unsubscribe': `<${await unsubscribeUrl(rt, user.id)}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' } });
      }
      await store.markEmailed(trx, user.id, missed.length > 0);
    });
  } catch (err) {
    // One refused address holds up no one else; its messages wait for the next run. The code only: no address or text in logs.
    rt.log.warn({ user_id: person.id, err: (err as { code?: string }).code ?? 'error' }, 'missed-messages email not sent');
  }
}

// ---- one-click unsubscribe (RFC 8058) ---------------------------------------

const signature = (key: Buffer, userId: string) => createHmac('sha256', key).update(`unsubscribe:${userId}`).digest('base64url');

/** The signed address that turns a person's emails off. */
export async function unsubscribeUrl(rt: Runtime, userId: string): Promise<string> {
  const token = `${userId}.${signature(await store.signingKey(rt.db), userId)}`;
  return `${rt.config.publicBaseUrl}/api/v1/email/unsubscribe?token=${encodeURIComponent(token)}`;
}

const badToken = () => new AppError('forbidden', 'this unsubscribe link is not valid');

/** `POST /email/unsubscribe?token=...`: the person's emails are off (`email_notifications: "never"`). */
export async function unsubscribe(rt: Runtime, token: string | undefined): Promise<void> {
  const [userId, sig] = (token ?? '').split('.');
  if (!userId || !sig || !/^[0-9a-f-]{36}$/.test(userId)) throw badToken();
  const expected = Buffer.from(signature(await store.signingKey(rt.db), userId));
  const given = Buffer.from(sig);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw badToken();
  await rt.db.transaction((trx) => store.setEmailNotifications(trx, userId, 'never'));
}
