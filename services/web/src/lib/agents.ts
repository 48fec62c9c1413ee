// What people do with agents (level 3, docs/bots.md "Agents at home"): slash
// commands (listed for autocomplete, invoked), feedback and approval answers,
// and the agent a DM is with (for its suggested prompts). Views call these;
// the answers' effects on messages arrive as message.updated for everyone.
import { ApiError, all, data, page } from './api.js';
import type { AxidClient } from './client.js';
import type { components } from './api-schema.js';
import type { User } from './types.js';

export type Command = components['schemas']['Command'];
export type FeedbackValue = 'positive' | 'negative';

/** `/dep` typed at the very start of the box, before any space: the prefix to complete, else null. */
export function commandQuery(text: string): string | null {
  const m = /^\/([a-z0-9-]*)$/i.exec(text);
  return m ? m[1]!.toLowerCase() : null;
}

/** `/deploy staging now` → the command and its text, when the box starts with a command name (a space before the `/` makes it a message). */
export function parseCommand(text: string): { name: string; text: string } | null {
  const m = /^\/([a-z0-9-]{1,32})(?:\s+([\s\S]*))?$/i.exec(text.trimEnd());
  return m ? { name: m[1]!.toLowerCase(), text: (m[2] ?? '').trim() } : null;
}

/** The commands starting with `prefix`, by name (at most `limit`). */
export function matchCommands(commands: Command[], prefix: string, limit = 8): Command[] {
  return commands.filter((c) => c.name.startsWith(prefix)).sort((a, b) => a.name.localeCompare(b.name)).slice(0, limit);
}

const loaded = new WeakMap<AxidClient, Promise<Command[]>>();

/** Every agent's commands in the workspace, fetched once per session (when `/` is first typed); a failure is tried again next time. */
export function workspaceCommands(client: AxidClient): Promise<Command[]> {
  let list = loaded.get(client);
  if (!list) {
    list = all((cursor) => page(client.api.GET('/api/v1/commands', { params: { query: { cursor, limit: 200 } } })));
    list.catch(() => loaded.delete(client));
    loaded.set(client, list);
  }
  return list;
}

/** Invokes a command; a refusal says why in words about commands (the API's 404 covers every "not here"). */
export async function invokeCommand(client: AxidClient, o: { conversationId: string; threadId: string | null; command: Command; text: string }) {
  try {
    await data(client.api.POST('/api/v1/commands/invoke', { body: { conversation_id: o.conversationId, thread_id: o.threadId, command: o.command.name, text: o.text } }));
  } catch (err) {
    if (err instanceof ApiError && err.code === 'not_found') {
      const agent = client.store.users.get(o.command.user_id);
      throw new CommandError(`/${o.command.name} can't be used here: ${agent ? `@${agent.name}` : 'its agent'} is not a member of this conversation.`);
    }
    throw err;
  }
}

/** A refusal already in plain words (shown as it is). */
export class CommandError extends Error {}

export async function sendFeedback(client: AxidClient, messageId: string, value: FeedbackValue | null) {
  return data(client.api.POST('/api/v1/interactions/feedback', { body: { message_id: messageId, value } }));
}

export async function answerApproval(client: AxidClient, messageId: string, decision: 'approve' | 'deny', comment: string) {
  return data(client.api.POST('/api/v1/interactions/approvals', { body: { message_id: messageId, decision, ...(comment ? { comment } : {}) } }));
}

/** Why an approval answer was refused, in words about the request. */
export function approvalProblem(err: unknown): string | null {
  if (!(err instanceof ApiError)) return null;
  if (err.code === 'conflict') return 'Someone already answered this request.';
  if (err.code === 'gone') return 'This request has expired.';
  if (err.code === 'forbidden') return 'Only the people it names can answer this request.';
  return null;
}

/** The agent a one-to-one DM is with, else null (a person, a group DM, a channel). */
export function dmAgent(client: AxidClient, conversationId: string): User | null {
  const dm = client.store.dms.get(conversationId);
  if (!dm || dm.kind !== 'dm') return null;
  const other = dm.member_ids.find((id) => id !== client.store.me?.id);
  const user = other ? client.store.users.get(other) : undefined;
  return user?.is_agent ? user : null;
}
