// Agents at home (level 3, contract §15): an agent's working status and its
// ephemeral messages. Neither is stored: each is an event on the live stream
// (shared/events.ts publishEphemeral), which a resumed stream never replays.
import type { Actor } from '../../../shared/auth.js';
import { forbidden, invalid } from '../../../shared/errors.js';
import { publishEphemeral } from '../../../shared/events.js';
import { isUuid } from '../../../shared/ids.js';
import type { Runtime } from '../../../shared/runtime.js';
import { requireReadable, type ChannelKind } from '../channels/channels.access.js';
import { isMember } from '../channels/channels.store.js';
import { messageRowOf } from '../messages/messages.service.js';
import { isRootOf } from '../messages/messages.store.js';
import type { MessageObject } from '../messages/messages.presenter.js';
import type { EphemeralInput, StatusInput } from './agents.schemas.js';
import { publishStatus } from './agents.status.js';

/** The conversation, if the actor is an agent member of it (404 hidden, 403 a person or not a member). */
async function requireAgentMember(rt: Runtime, actor: Actor, conversationId: string, kind: ChannelKind, what: string) {
  const readable = await requireReadable(rt.db, actor, conversationId, kind, rt.access);
  if (!actor.isAgent) throw forbidden(`only an agent ${what}`);
  if (!readable.isMember) throw forbidden(`you are not a member of this ${kind === 'channel' ? 'channel' : 'conversation'}`);
  return readable.channel;
}

async function checkThread(rt: Runtime, conversationId: string, threadId: string | null | undefined): Promise<string | null> {
  if (threadId == null) return null;
  if (!isUuid(threadId) || !(await isRootOf(rt.db, conversationId, threadId))) throw invalid('thread_id: must name a top-level message of this conversation');
  return threadId;
}

/** Shows (or with "" clears) the agent's working status to the conversation's readers; it lapses at expires_at. */
export async function setStatus(rt: Runtime, actor: Actor, conversationId: string, kind: ChannelKind, body: StatusInput) {
  const channel = await requireAgentMember(rt, actor, conversationId, kind, 'sets a working status');
  const threadId = await checkThread(rt, channel.id, body.thread_id);
  return publishStatus(rt, { workspaceId: actor.workspaceId, conversationId: channel.id, threadId, userId: actor.userId }, body.status, body.loading_messages ?? []);
}

export type EphemeralMessage = MessageObject & { ephemeral: true };

/**
 * A message only `user_id` sees: rendered as a post would be (every content
 * rule applies), sent to that user's streams as message.ephemeral, and
 * forgotten. Never stored, so never listed, searched or replayed.
 */
export async function sendEphemeral(rt: Runtime, actor: Actor, conversationId: string, kind: ChannelKind, body: EphemeralInput): Promise<EphemeralMessage> {
  const channel = await requireAgentMember(rt, actor, conversationId, kind, 'sends ephemeral messages');
  // A member only: someone outside the conversation is told nothing from it.
  if (!isUuid(body.user_id) || !(await isMember(rt.db, channel.id, body.user_id))) throw invalid('user_id: must name a member of this conversation');
  const threadId = await checkThread(rt, channel.id, body.thread_id);
  const row = await messageRowOf(rt, {
    workspaceId: actor.workspaceId,
    channelId: channel.id,
    authorId: actor.userId,
    content: body.content,
    content_json: body.content_json,
    thread_id: threadId,
  });
  const message: EphemeralMessage = { ...rt.presenters.message(row), ephemeral: true };
  await publishEphemeral(rt.redis, rt.bus, {
    type: 'message.ephemeral',
    to: { scope: 'users', workspace_id: actor.workspaceId, user_ids: [body.user_id] },
    data: { message },
  });
  return message;
}
