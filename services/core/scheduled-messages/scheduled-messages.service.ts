// Scheduled messages (level 3, contract §14): a post written now and posted
// by the worker at send_at, as its author, with the checks of posting then.
// Exactly once: the job (scheduled_message.send, delayed in BullMQ, recorded
// in the job outbox with the row) posts through postMessage, whose
// transaction also moves the row from `scheduled` to `sent`; a job run again
// (a worker killed between the commit and BullMQ's acknowledgement) finds the
// row sent, rolls its post back, and stops.
import type { Actor } from '../../../shared/auth.js';
import type { Db } from '../../../shared/db/knex.js';
import { AppError, forbidden, invalid, notFound } from '../../../shared/errors.js';
import { decodeCursor, pageOf, type PageQuery } from '../../../shared/http/envelope.js';
import { recordJob, type JobContext, type JobPayloads } from '../../../shared/jobs.js';
import type { Runtime } from '../../../shared/runtime.js';
import { requireReadable, type ChannelKind } from '../channels/channels.access.js';
import { findWithMembership } from '../channels/channels.store.js';
import { canParticipate } from '../messages/messages.policy.js';
import { postMessage, prepareMessage } from '../messages/messages.service.js';
import type { PostMessageInput } from '../messages/messages.schemas.js';
import { isRootOf } from '../messages/messages.store.js';
import { presentScheduledMessage, type ScheduledMessageRow } from './scheduled-messages.presenter.js';
import { MAX_LEAD_DAYS, type UpdateScheduledMessageInput } from './scheduled-messages.schemas.js';
import * as store from './scheduled-messages.store.js';

/**
 * A time `field` may be scheduled for: SCHEDULE_MIN_LEAD_SECONDS (60; lower
 * only in tests) to 120 days ahead. Shared with reminders.
 */
export function scheduledTime(rt: Runtime, iso: string, field: string): Date {
  const at = new Date(iso);
  const now = Date.now();
  const minLead = rt.config.scheduleMinLeadSeconds;
  if (at.getTime() < now + minLead * 1000 || at.getTime() > now + MAX_LEAD_DAYS * 86_400_000) {
    throw invalid(`${field}: must be ${minLead === 60 ? '1 minute' : `${minLead} second${minLead === 1 ? '' : 's'}`} to ${MAX_LEAD_DAYS} days ahead`);
  }
  return at;
}

/** An archived channel takes no post (`archived_at`, where the archive feature exists). */
export const archivedReason = (channel: object) =>
  (channel as { archived_at?: Date | null }).archived_at ? 'the channel is archived' : null;

/** Checks a scheduled post as its post would be checked now, without writing it. */
async function checkPost(rt: Runtime, actor: Actor, channelId: string, input: { content: string; content_json?: unknown; metadata?: ScheduledMessageRow['metadata']; thread_id?: string | null }) {
  const prepared = await prepareMessage(rt, { workspaceId: actor.workspaceId, authorId: actor.userId, ...input });
  if (prepared.threadId && !(await isRootOf(rt.db, channelId, prepared.threadId))) throw invalid('thread_id: must name a top-level message of this channel');
  return prepared;
}

/** POST .../messages with send_at: answered 202 with the scheduled message. */
export async function scheduleMessage(rt: Runtime, actor: Actor, channelId: string, kind: ChannelKind, body: PostMessageInput & { send_at: string }) {
  if (body.streaming) throw invalid('send_at: a streamed reply cannot be scheduled');
  const sendAt = scheduledTime(rt, body.send_at, 'send_at');
  const { channel, isMember } = await requireReadable(rt.db, actor, channelId, kind, rt.access);
  if (!canParticipate(isMember)) throw forbidden(kind === 'channel' ? 'you are not a member of this channel: join it first' : 'you are not a member of this conversation');
  const archived = archivedReason(channel);
  if (archived) throw new AppError('forbidden', `${archived}: it takes no new messages`);
  const prepared = await checkPost(rt, actor, channel.id, body);
  const row = await rt.db.transaction(async (trx) => {
    const created = await store.insertScheduled(trx, {
      workspace_id: actor.workspaceId,
      author_id: actor.userId,
      channel_id: channel.id,
      thread_id: prepared.threadId,
      content: body.content,
      content_json: prepared.blocks.content_json,
      metadata: prepared.metadata,
      send_at: sendAt,
    });
    await recordSend(rt, trx, created);
    return created;
  });
  return presentScheduledMessage(row);
}

const recordSend = (rt: Runtime, trx: Db, row: Pick<ScheduledMessageRow, 'id' | 'send_at'>) =>
  recordJob(rt, trx, 'scheduled_message.send', { scheduledMessageId: row.id, at: row.send_at.getTime() }, { runAt: row.send_at });

export async function listScheduledMessages(rt: Runtime, actor: Actor, q: PageQuery) {
  const rows = await store.listScheduled(rt.db, { authorId: actor.userId, before: decodeCursor(q.cursor), limit: q.limit });
  return pageOf(rows, q.limit, presentScheduledMessage);
}

/** The caller's own scheduled message; anyone else's is not there (404). */
async function ownScheduled(rt: Runtime, actor: Actor, id: string) {
  const row = await store.findScheduled(rt.db, id);
  if (!row || row.author_id !== actor.userId || row.workspace_id !== actor.workspaceId) throw notFound('Scheduled message');
  return row;
}

const notScheduled = (row: ScheduledMessageRow) => new AppError('conflict', `this message is ${row.status === 'sent' ? 'sent already' : 'failed'}: only a scheduled one can be changed or deleted`);

export async function updateScheduledMessage(rt: Runtime, actor: Actor, id: string, patch: UpdateScheduledMessageInput) {
  const row = await ownScheduled(rt, actor, id);
  if (row.status !== 'scheduled') throw notScheduled(row);
  const sendAt = patch.send_at === undefined ? undefined : scheduledTime(rt, patch.send_at, 'send_at');
  const prepared = await checkPost(rt, actor, row.channel_id, {
    content: patch.content ?? row.content,
    content_json: patch.content_json === undefined ? row.content_json : patch.content_json,
    metadata: patch.metadata === undefined ? row.metadata : patch.metadata,
    thread_id: row.thread_id,
  });
  const updated = await rt.db.transaction(async (trx) => {
    const changed = await store.updateWhileScheduled(trx, id, {
      ...(patch.content !== undefined ? { content: patch.content } : {}),
      ...(patch.content_json !== undefined ? { content_json: prepared.blocks.content_json } : {}),
      ...(patch.metadata !== undefined ? { metadata: prepared.metadata } : {}),
      ...(sendAt ? { send_at: sendAt } : {}),
    });
    if (!changed) return undefined;
    // The job for the old time finds send_at moved and does nothing.
    if (sendAt && sendAt.getTime() !== row.send_at.getTime()) await recordSend(rt, trx, changed);
    return changed;
  });
  if (!updated) throw notScheduled((await store.findScheduled(rt.db, id)) ?? { ...row, status: 'sent' });
  return presentScheduledMessage(updated);
}

export async function deleteScheduledMessage(rt: Runtime, actor: Actor, id: string) {
  const row = await ownScheduled(rt, actor, id);
  if (row.status !== 'scheduled' || (await store.deleteWhileScheduled(rt.db, id)) === 0) {
    throw notScheduled((await store.findScheduled(rt.db, id)) ?? { ...row, status: 'sent' });
  }
}

/** Thrown inside the post's transaction when the row is no longer this job's to send: the post rolls back. */
class AlreadySettled extends Error {}

/** Why the author could not post there now, or null. */
async function refusal(rt: Runtime, row: ScheduledMessageRow): Promise<string | null> {
  const author = await rt.db('users').where({ id: row.author_id }).first('deactivated_at', 'role', 'is_agent');
  if (!author || author.deactivated_at) return 'the author is no longer a member of the workspace';
  const found = await findWithMembership(rt.db, { keyId: '', userId: row.author_id, workspaceId: row.workspace_id, role: author.role, isAgent: author.is_agent, scopes: null, conversationIds: null }, row.channel_id);
  if (!found) return 'the conversation no longer exists';
  if (!found.isMember) return `the author is no longer a member of this ${found.channel.kind === 'channel' ? 'channel' : 'conversation'}`;
  return archivedReason(found.channel);
}

/** The job: posts the scheduled message if it is still due at the time the job was made for. */
export async function sendScheduledMessage(rt: Runtime, p: JobPayloads['scheduled_message.send'], job: JobContext): Promise<void> {
  const row = await store.findScheduled(rt.db, p.scheduledMessageId);
  if (!row || row.status !== 'scheduled' || row.send_at.getTime() !== p.at) return;
  const sendAt = row.send_at;
  const refused = await refusal(rt, row);
  if (refused) {
    await store.settle(rt.db, row.id, sendAt, { status: 'failed', error: refused });
    return;
  }
  try {
    await postMessage(rt, {
      workspaceId: row.workspace_id,
      channelId: row.channel_id,
      authorId: row.author_id,
      content: row.content,
      content_json: row.content_json,
      metadata: row.metadata,
      thread_id: row.thread_id,
      alsoInTransaction: async (trx, message) => {
        if (!(await store.settle(trx, row.id, sendAt, { status: 'sent', message_id: message.id }))) throw new AlreadySettled();
      },
    });
  } catch (err) {
    if (err instanceof AlreadySettled) return;
    // A rule of posting refuses it now (its thread deleted, a file no longer readable): final.
    if (err instanceof AppError && err.status < 500) {
      await store.settle(rt.db, row.id, sendAt, { status: 'failed', error: err.message });
      return;
    }
    if (job.lastAttempt) await store.settle(rt.db, row.id, sendAt, { status: 'failed', error: 'it could not be posted (the service was unavailable)' });
    throw err;
  }
}
