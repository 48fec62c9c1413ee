// A working status lives only in the event that carries it (contract §15: not
// stored). The one thing kept is a Redis key per status, lapsing with it, so
// that an agent's post in that thread knows a status is showing and sends the
// clearing event: a post by an agent with no status showing costs one DEL.
import { serviceUnavailable } from '../../../shared/errors.js';
import { answering } from '../../../shared/redis.js';
import { publishEphemeral, type AxidEvent } from '../../../shared/events.js';
import type { Runtime } from '../../../shared/runtime.js';
import { STATUS_TTL_MS } from './agents.schemas.js';

export interface StatusPlace {
  workspaceId: string;
  conversationId: string;
  threadId: string | null;
  userId: string;
}

const statusKey = (rt: Runtime, p: StatusPlace) => `${rt.config.redisKeyPrefix}agent-status:${p.conversationId}:${p.threadId ?? '-'}:${p.userId}`;

export interface AgentStatusObject {
  conversation_id: string;
  thread_id: string | null;
  user_id: string;
  status: string;
  loading_messages: string[];
  expires_at: Date;
}

/** The agent.status event of a place: to the conversation's readers (its members), as typing goes. */
export const statusEvent = (p: StatusPlace, status: AgentStatusObject): AxidEvent => ({
  type: 'agent.status',
  to: { scope: 'channel', workspace_id: p.workspaceId, channel_id: p.conversationId },
  data: { ...status },
});

/** Shows (or, with status "", clears) a working status: the key lapses with it, the event goes at once. */
export async function publishStatus(rt: Runtime, p: StatusPlace, status: string, loadingMessages: string[]): Promise<AgentStatusObject> {
  const clearing = status === '';
  const now = Date.now();
  const object: AgentStatusObject = {
    conversation_id: p.conversationId,
    thread_id: p.threadId,
    user_id: p.userId,
    status,
    loading_messages: clearing ? [] : loadingMessages,
    expires_at: new Date(clearing ? now : now + STATUS_TTL_MS),
  };
  // Refused (503) while Redis is away, as typing is: nothing would carry it. The key is set
  // before the event goes, so a post right after it always finds the status to clear.
  if (!answering(rt.redis)) throw serviceUnavailable();
  if (clearing) await rt.redis.del(statusKey(rt, p));
  else await rt.redis.set(statusKey(rt, p), '1', 'PX', STATUS_TTL_MS);
  await publishEphemeral(rt.redis, rt.bus, statusEvent(p, object));
  return object;
}

/**
 * After an agent's post: if it had a status showing in that thread, the
 * clearing agent.status (status ""). Not awaited by the post, and never fails
 * it: a status left showing lapses at its expires_at anyway.
 */
export function clearStatusAfterPost(rt: Runtime, p: StatusPlace): void {
  if (!answering(rt.redis)) return;
  void (async () => {
    if ((await rt.redis.del(statusKey(rt, p))) === 0) return;
    const now = new Date();
    await publishEphemeral(rt.redis, rt.bus, statusEvent(p, { conversation_id: p.conversationId, thread_id: p.threadId, user_id: p.userId, status: '', loading_messages: [], expires_at: now }));
  })().catch((err: unknown) => rt.log.warn({ err }, 'clearing an agent status after its post failed'));
}
