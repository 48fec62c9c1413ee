// Storage of email notifications (migration 206): the scan's cursor and
// signing key, what waits to be emailed, and each person's setting.
import { randomBytes } from 'node:crypto';
import type { Db, Knex } from '../../../shared/db/knex.js';

/** Turns a person's emails on or off; off also forgets what waited to be sent. */
export async function setEmailNotifications(db: Db, userId: string, value: 'mentions' | 'never'): Promise<void> {
  await db('users').where({ id: userId }).update({ email_notifications: value });
  if (value === 'never') await db('email_pending').where({ user_id: userId }).delete();
}

/** The key that signs unsubscribe links, made on first use. */
export async function signingKey(db: Db): Promise<Buffer> {
  const row = await db('email_state').where({ id: 1 }).first('signing_key');
  if (row) return row.signing_key as Buffer;
  await db.raw('INSERT INTO email_state (id, signing_key) VALUES (1, ?) ON CONFLICT (id) DO NOTHING', [randomBytes(32)]);
  return ((await db('email_state').where({ id: 1 }).first('signing_key')) as { signing_key: Buffer }).signing_key;
}

/** Workspaces where someone wants email (users_email_notify). */
export const workspacesToScan = (db: Db): Promise<string[]> =>
  db('users')
    .whereNotNull('email')
    .where({ email_notifications: 'mentions', is_agent: false })
    .whereNull('deactivated_at')
    .distinct('workspace_id')
    .pluck('workspace_id');

/**
 * A workspace's scan position, locked for this run (null: another worker has
 * it). Made on first use just before the messages of the last `sinceSeconds`,
 * so a workspace's history is not emailed and a recent mention is not missed.
 */
export async function lockScan(trx: Knex.Transaction, workspaceId: string, sinceSeconds: number): Promise<string | null> {
  await trx.raw(
    `INSERT INTO email_scan (workspace_id, seq)
     SELECT ?, coalesce((SELECT seq FROM messages WHERE workspace_id = ? AND created_at < now() - make_interval(secs => ?) ORDER BY seq DESC LIMIT 1), 0)
     ON CONFLICT (workspace_id) DO NOTHING`,
    [workspaceId, workspaceId, sinceSeconds],
  );
  const row = await trx('email_scan').where({ workspace_id: workspaceId }).forUpdate().skipLocked().first('seq');
  return row ? String(row.seq) : null;
}

export interface ScannedMessage {
  seq: string;
  id: string;
  channel_id: string;
  author_id: string | null;
  mentioned_user_ids: string[];
  created_at: Date;
  kind: 'channel' | 'dm' | 'group_dm';
}

/** A workspace's messages after the cursor, oldest first (messages_workspace_seq). */
export const messagesAfter = (db: Db, workspaceId: string, seq: string, limit: number): Promise<ScannedMessage[]> =>
  db('messages as m')
    .join('channels as c', 'c.id', 'm.channel_id')
    .where('m.workspace_id', workspaceId)
    .where('m.seq', '>', seq)
    .orderBy('m.seq')
    .limit(limit)
    .select('m.seq', 'm.id', 'm.channel_id', 'm.author_id', 'm.mentioned_user_ids', 'm.created_at', 'c.kind');

export const membersOf = (db: Db, channelIds: string[]): Promise<{ channel_id: string; user_id: string }[]> =>
  channelIds.length === 0 ? Promise.resolve([]) : db('channel_members').whereIn('channel_id', channelIds).select('channel_id', 'user_id');

/**
 * Keeps the (person, message) pairs worth an email: a person with an email,
 * emails on, active, not an agent, a member of the conversation who has not
 * read the message yet.
 */
export async function addPending(db: Db, pairs: { user_id: string; message_id: string }[]): Promise<void> {
  if (pairs.length === 0) return;
  await db.raw(
    `INSERT INTO email_pending (user_id, message_id)
     SELECT p.user_id, p.message_id FROM unnest(?::uuid[], ?::uuid[]) AS p(user_id, message_id)
       JOIN users u ON u.id = p.user_id AND u.email IS NOT NULL AND u.deactivated_at IS NULL AND NOT u.is_agent AND u.email_notifications = 'mentions'
       JOIN messages m ON m.id = p.message_id
       JOIN channel_members cm ON cm.channel_id = m.channel_id AND cm.user_id = p.user_id AND (cm.last_read_seq IS NULL OR cm.last_read_seq < m.seq)
     ON CONFLICT DO NOTHING`,
    [`{${pairs.map((p) => p.user_id).join(',')}}`, `{${pairs.map((p) => p.message_id).join(',')}}`],
  );
}

export const setScan = (trx: Knex.Transaction, workspaceId: string, seq: string) => trx('email_scan').where({ workspace_id: workspaceId }).update({ seq });

/** People who want email, with something waiting and no email in the last `gapMinutes`, by id after `after` (keyset). */
export const duePeople = (db: Db, gapMinutes: number, after: string | null, limit: number): Promise<{ id: string; workspace_id: string }[]> =>
  db('users as u')
    .whereIn('u.id', db('email_pending').distinct('user_id'))
    .whereNotNull('u.email')
    .where('u.email_notifications', 'mentions')
    .whereNull('u.deactivated_at')
    .where((q) => q.whereNull('u.email_notified_at').orWhere('u.email_notified_at', '<', db.raw(`now() - make_interval(mins => ?)`, [gapMinutes])))
    .modify((q) => {
      if (after) q.where('u.id', '>', after);
    })
    .orderBy('u.id')
    .limit(limit)
    .select('u.id', 'u.workspace_id');

/** The person, locked (skipped when another worker holds them), if still due. */
export const lockDuePerson = (trx: Knex.Transaction, userId: string, gapMinutes: number) =>
  trx('users as u')
    .join('workspaces as w', 'w.id', 'u.workspace_id')
    .where('u.id', userId)
    .whereNotNull('u.email')
    .where('u.email_notifications', 'mentions')
    .whereNull('u.deactivated_at')
    .where((q) => q.whereNull('u.email_notified_at').orWhere('u.email_notified_at', '<', trx.raw(`now() - make_interval(mins => ?)`, [gapMinutes])))
    .forUpdate('u')
    .skipLocked()
    .first('u.id', 'u.email', 'u.workspace_id', 'w.name as workspace_name') as Promise<{ id: string; email: string; workspace_id: string; workspace_name: string } | undefined>;

export interface PendingMessage {
  id: string;
  channel_id: string;
  content: string;
  kind: 'channel' | 'dm' | 'group_dm';
  channel_name: string | null;
  author_name: string | null;
  author_display_name: string | null;
}

/** What waits for a person and is still unread, oldest first. */
export const unreadPending = (db: Db, userId: string, limit: number): Promise<PendingMessage[]> =>
  db('email_pending as p')
    .join('messages as m', 'm.id', 'p.message_id')
    .join('channels as c', 'c.id', 'm.channel_id')
    .join('channel_members as cm', (j) => j.on('cm.channel_id', 'm.channel_id').andOn('cm.user_id', 'p.user_id'))
    .leftJoin('users as a', 'a.id', 'm.author_id')
    .where('p.user_id', userId)
    .where((q) => q.whereNull('cm.last_read_seq').orWhere('cm.last_read_seq', '<', db.ref('m.seq')))
    .orderBy('m.seq')
    .limit(limit)
    .select('m.id', 'm.channel_id', 'm.content', 'c.kind', 'c.name as channel_name', 'a.name as author_name', 'a.display_name as author_display_name');

export async function markEmailed(trx: Knex.Transaction, userId: string, sent: boolean): Promise<void> {
  await trx('email_pending').where({ user_id: userId }).delete();
  if (sent) await trx('users').where({ id: userId }).update({ email_notified_at: trx.fn.now() });
}
