// The conversation tools of the remote MCP endpoint (contract §15, docs/mcp.md):
// read, search, post, react and invoke commands as the key's user. Each is one
// or two calls of the HTTP API, so the API's own rules (scopes, membership,
// archived channels, the loop guard) answer for them; a refusal is a tool
// error with the API's code.
import { z } from 'zod';
import { ToolFailure, type AxidApi } from '../api.js';

const object = z.record(z.string(), z.unknown());
const Limit = z.number().int().min(1).max(200).optional().describe('How many, 1 to 200 (default 50).');
const ConversationId = z.string().trim().min(1).describe('A channel or DM conversation id (list_conversations lists them).');

/**
 * Runs `call` on the conversation's path: channels and DMs live under
 * /channels and /dms, and each answers not_found for the other kind, so a
 * not_found under /channels (nothing was done) is tried again under /dms.
 */
async function onConversation<T>(api: AxidApi, id: string, call: (base: string) => Promise<T>): Promise<T> {
  const encoded = encodeURIComponent(id);
  try {
    return await call(`/channels/${encoded}`);
  } catch (error) {
    if (!(error instanceof ToolFailure && error.code === 'not_found')) throw error;
  }
  try {
    return await call(`/dms/${encoded}`);
  } catch (error) {
    if (error instanceof ToolFailure && error.code === 'not_found') {
      throw new ToolFailure('not_found', error.message, 'No conversation (or message) with this id is visible to this key. List what it can reach with list_conversations.', error.status);
    }
    throw error;
  }
}

/** A query string of the defined values. */
const query = (values: Record<string, string | number | undefined | null>) => {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) if (value !== undefined && value !== null) params.set(name, String(value));
  const text = params.toString();
  return text ? `?${text}` : '';
};

const Page = {
  messages: z.array(object).describe('Messages, newest first.'),
  next_cursor: z.string().nullable().describe('Pass as cursor for older ones; null when there are none.'),
};

async function page(api: AxidApi, path: string) {
  const answer = await api.request('GET', path);
  return { messages: (answer.data as Record<string, unknown>[]) ?? [], next_cursor: answer.pagination?.has_more ? answer.pagination.next_cursor : null };
}

export const listConversationsTool = {
  name: 'list_conversations',
  config: {
    title: 'List conversations',
    description:
      'Lists the channels (public ones and the private ones the key\'s user is in) and the DM conversations the key can reach, with their ids, names and unread counts. ' +
      'Use the ids with read_conversation, post_message and invoke_command. Lists stop at 200 items each and are then named in "truncated".',
    inputSchema: {
      include_archived: z.boolean().optional().describe('Also list archived channels (read-only).'),
    },
    outputSchema: {
      channels: z.array(object),
      dms: z.array(object),
      truncated: z.array(z.string()).optional(),
    },
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async run(api: AxidApi, args: { include_archived?: boolean | undefined }) {
    const [channels, dms] = await Promise.all([api.list<Record<string, unknown>>(`/channels${query({ include_archived: args.include_archived ? 'true' : undefined })}`), api.list<Record<string, unknown>>('/dms')]);
    const truncated = [channels.truncated && 'channels', dms.truncated && 'dms'].filter((s): s is string => Boolean(s));
    return { channels: channels.items, dms: dms.items, ...(truncated.length ? { truncated } : {}) };
  },
};

export const readConversationTool = {
  name: 'read_conversation',
  config: {
    title: 'Read a conversation',
    description:
      'Reads the messages of a channel or DM, newest first: its top-level messages, or with thread_id the replies of that thread. ' +
      'Pass next_cursor back as cursor for older messages.',
    inputSchema: {
      conversation_id: ConversationId,
      thread_id: z.string().optional().describe('A top-level message id: read its replies instead.'),
      limit: Limit,
      cursor: z.string().optional().describe('next_cursor of the previous page.'),
    },
    outputSchema: Page,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  run(api: AxidApi, args: { conversation_id: string; thread_id?: string | undefined; limit?: number | undefined; cursor?: string | undefined }) {
    return onConversation(api, args.conversation_id, (base) => page(api, `${base}/messages${query({ thread_id: args.thread_id, limit: args.limit, cursor: args.cursor })}`));
  },
};

export const searchMessagesTool = {
  name: 'search_messages',
  config: {
    title: 'Search messages',
    description:
      'Searches the messages the key can read, newest first. "query" takes words, "quoted phrases", -excluded words and the filters from:@name, in:#channel, before:/after:/on:YYYY-MM-DD, has:file, has:link, is:pinned, is:thread.',
    inputSchema: {
      query: z.string().trim().min(1).max(1000).describe('What to search for.'),
      conversation_id: z.string().optional().describe('Only in this channel or DM.'),
      limit: Limit,
      cursor: z.string().optional().describe('next_cursor of the previous page.'),
    },
    outputSchema: Page,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  run(api: AxidApi, args: { query: string; conversation_id?: string | undefined; limit?: number | undefined; cursor?: string | undefined }) {
    return page(api, `/search/messages${query({ q: args.query, channel_id: args.conversation_id, limit: args.limit, cursor: args.cursor })}`);
  },
};

export const postMessageTool = {
  name: 'post_message',
  config: {
    title: 'Post a message',
    description:
      'Posts a message as the key\'s user in a channel or DM (thread_id: as a reply in that thread). "content" is markdown; "content_json" an optional rich-text document with blocks (check it with compose_block_message). ' +
      'Result: the message as stored.',
    inputSchema: {
      conversation_id: ConversationId,
      content: z.string().min(1).max(40_000).describe('Message text (markdown), 1 to 40,000 characters.'),
      content_json: z.record(z.string(), z.unknown()).optional().describe('Optional rich-text document {"type": "doc", "content": [...]}.'),
      thread_id: z.string().optional().describe('A top-level message id of the same conversation: post as a reply.'),
    },
    outputSchema: { message_id: z.string(), message: object },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  },
  async run(api: AxidApi, args: { conversation_id: string; content: string; content_json?: Record<string, unknown> | undefined; thread_id?: string | undefined }) {
    const body = { content: args.content, ...(args.content_json ? { content_json: args.content_json } : {}), ...(args.thread_id ? { thread_id: args.thread_id } : {}) };
    const message = await onConversation(api, args.conversation_id, (base) => api.post<Record<string, unknown>>(`${base}/messages`, body));
    return { message_id: String(message.id), message };
  },
};

export const reactTool = {
  name: 'react',
  config: {
    title: 'React to a message',
    description: 'Adds a reaction as the key\'s user to a message of a channel or DM: an emoji name such as "thumbsup" or a Unicode emoji. Adding one already there changes nothing.',
    inputSchema: {
      conversation_id: ConversationId,
      message_id: z.string().trim().min(1).describe('The message id.'),
      emoji: z.string().trim().min(1).max(64).describe('An emoji name ("thumbsup", a custom :name: without colons) or a Unicode emoji.'),
    },
    outputSchema: { reaction: object },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async run(api: AxidApi, args: { conversation_id: string; message_id: string; emoji: string }) {
    const reaction = await onConversation(api, args.conversation_id, (base) => api.post<Record<string, unknown>>(`${base}/messages/${encodeURIComponent(args.message_id)}/reactions`, { emoji: args.emoji }));
    return { reaction };
  },
};

export const invokeCommandTool = {
  name: 'invoke_command',
  config: {
    title: 'Invoke an agent\'s slash command',
    description:
      'Invokes an agent\'s slash command (e.g. "deploy") in a channel or DM where both the key\'s user and that agent are members: the agent receives it as a command.invoked event. ' +
      'Result: the invocation id.',
    inputSchema: {
      conversation_id: ConversationId,
      command: z.string().trim().min(1).max(33).describe('The command name, with or without its leading /.'),
      text: z.string().max(4000).optional().describe('The text after the command.'),
      thread_id: z.string().optional().describe('A top-level message id: invoke in that thread.'),
    },
    outputSchema: { id: z.string() },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  },
  run(api: AxidApi, args: { conversation_id: string; command: string; text?: string | undefined; thread_id?: string | undefined }) {
    return api.post<{ id: string }>('/commands/invoke', {
      conversation_id: args.conversation_id,
      command: args.command,
      text: args.text ?? '',
      ...(args.thread_id ? { thread_id: args.thread_id } : {}),
    });
  },
};
