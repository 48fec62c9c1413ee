// Reminders (level 3, contract §14): at remind_at the workspace's system agent
// "Axid" sends the person a DM quoting the text or linking the message. The
// same exactly-once path as scheduled messages: a delayed job recorded with
// the row, and the row's `scheduled` → `sent` in the DM post's transaction.
import type { Actor } from '../../../shared/auth.js';
import { AppError, notFound } from '../../../shared/errors.js';
import { decodeCursor, pageOf, type PageQuery } from '../../../shared/http/envelope.js';
import { recordJob, type JobContext, type JobPayloads } from '../../../shared/jobs.js';
import type { Runtime } from '../../../shared/runtime.js';
import { requireReadable } from '../channels/channels.access.js';
import { openConversation } from '../dms/dms.service.js';
import { postMessage } from '../messages/messages.service.js';
import { scheduledTime } from '../scheduled-messages/scheduled-messages.service.js';
import { systemAgentId } from '../workspaces/system-agent.js';
import { presentReminder, type ReminderRow } from './reminders.presenter.js';
import type { CreateReminderInput } from './reminders.schemas.js';
import * as store from './reminders.store.js';

/** The metadata type of a reminder's DM: clients may render it as such. */
export const REMINDER_METADATA_TYPE = 'axid.reminder';

export async function createReminder(rt: Runtime, actor: Actor, body: CreateReminderInput) {
  const remindAt = scheduledTime(rt, body.remind_at, 'remind_at');
  let channelId: string | null = null;
  if (body.message_id) {
    // Only a message the caller can read (anything else: the same 404).
    const message = await rt.db('messages as m').join('channels as c', 'c.id', 'm.channel_id').where({ 'm.id': body.message_id, 'm.workspace_id': actor.workspaceId }).first('m.channel_id', 'c.kind');
    if (!message) throw notFound('Message');
    await requireReadable(rt.db, actor, message.channel_id, message.kind === 'channel' ? 'channel' : 'conversation', rt.access).catch(() => {
      throw notFound('Message');
    });
    channelId = message.channel_id as string;
  }
  const row = await rt.db.transaction(async (trx) => {
    const created = await store.insertReminder(trx, {
      workspace_id: actor.workspaceId,
      user_id: actor.userId,
      text: body.text ?? null,
      message_id: body.message_id ?? null,
      channel_id: channelId,
      remind_at: remindAt,
    });
    await recordJob(rt, trx, 'reminder.send', { reminderId: created.id, at: remindAt.getTime() }, { runAt: remindAt });
    return created;
  });
  return presentReminder(row);
}

export async function listReminders(rt: Runtime, actor: Actor, q: PageQuery) {
  const rows = await store.listReminders(rt.db, { userId: actor.userId, before: decodeCursor(q.cursor), limit: q.limit });
  return pageOf(rows, q.limit, presentReminder);
}

export async function deleteReminder(rt: Runtime, actor: Actor, id: string) {
  const row = await store.findReminder(rt.db, id);
  if (!row || row.user_id !== actor.userId) throw notFound('Reminder');
  if (row.status !== 'scheduled' || (await store.deleteWhileScheduled(rt.db, id)) === 0) {
    throw new AppError('conflict', 'this reminder was sent already: only a scheduled one can be deleted');
  }
}

/** The DM's text: the reminder's text quoted, or a link to the message. */
function reminderContent(rt: Runtime, row: ReminderRow): string {
  if (row.text !== null) return `Reminder:\n${row.text.split('\n').map((line) => `> ${line}`).join('\n')}`;
  const link = `${rt.config.publicBaseUrl}/c/${encodeURIComponent(row.channel_id ?? '')}/m/${encodeURIComponent(row.message_id ?? '')}`;
  return `Reminder: [this message](${link})`;
}

class AlreadySettled extends Error {}

/** The job: the system agent's DM to the reminder's owner, once. */
export async function sendReminder(rt: Runtime, p: JobPayloads['reminder.send'], job: JobContext): Promise<void> {
  const row = await store.findReminder(rt.db, p.reminderId);
  if (!row || row.status !== 'scheduled' || row.remind_at.getTime() !== p.at) return;
  const person = await rt.db('users').where({ id: row.user_id }).first('deactivated_at');
  if (!person || person.deactivated_at) {
    await store.settle(rt.db, row.id, { status: 'failed', error: 'the person is no longer a member of the workspace' });
    return;
  }
  try {
    const agentId = await systemAgentId(rt, row.workspace_id);
    const agent: Actor = { keyId: '', userId: agentId, workspaceId: row.workspace_id, role: 'member', isAgent: true, scopes: null, conversationIds: null };
    const { conversation } = await openConversation(rt, agent, [row.user_id]);
    await postMessage(rt, {
      workspaceId: row.workspace_id,
      channelId: conversation.id,
      authorId: agentId,
      content: reminderContent(rt, row),
      metadata: { type: REMINDER_METADATA_TYPE, data: { reminder_id: row.id, message_id: row.message_id, conversation_id: row.channel_id } },
      alsoInTransaction: async (trx, message) => {
        if (!(await store.settle(trx, row.id, { status: 'sent', sent_message_id: message.id }))) throw new AlreadySettled();
      },
    });
  } catch (err) {
    if (err instanceof AlreadySettled) return;
    if (err instanceof AppError && err.status < 500) {
      await store.settle(rt.db, row.id, { status: 'failed', error: err.message });
      return;
    }
    if (job.lastAttempt) await store.settle(rt.db, row.id, { status: 'failed', error: 'it could not be sent (the service was unavailable)' });
    throw err;
  }
}
