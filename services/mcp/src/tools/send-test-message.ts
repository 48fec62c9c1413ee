import { z } from 'zod';
import type { BlockRules } from '../../../../shared/blocks/index.js';
import { ToolFailure, type AxidApi } from '../api.js';
import { compose } from './compose.js';

export const sendTestMessageTool = {
  name: 'send_test_message',
  config: {
    title: 'Post a test message',
    description:
      'Posts a message to an Axid channel with the key in AXID_API_KEY (the key\'s user must be able to see the channel; find channel ids with inspect_workspace include ["channels"]). ' +
      '"content" is the plain/markdown text every client shows; "content_json" is an optional rich-text document with blocks (check it first with compose_block_message). ' +
      'Result: {message_id, card_origin, mentioned_user_ids, channel_id}.',
    inputSchema: {
      channel_id: z.string().trim().min(1).describe('The channel id.'),
      content: z.string().min(1).max(40_000).describe('Message text (markdown), 1 to 40,000 characters; the fallback shown for content_json.'),
      content_json: z
        .union([z.record(z.string(), z.unknown()), z.string()])
        .nullable()
        .optional()
        .describe('Optional rich-text document {"type": "doc", "content": [...]} (object or its JSON text).'),
    },
    outputSchema: {
      message_id: z.string(),
      channel_id: z.string(),
      card_origin: z.string().nullable(),
      mentioned_user_ids: z.array(z.string()),
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  },
  async run(api: AxidApi, rules: BlockRules, args: { channel_id: string; content: string; content_json?: unknown }) {
    let contentJson = args.content_json ?? undefined;
    if (typeof contentJson === 'string') {
      try {
        contentJson = JSON.parse(contentJson);
      } catch {
        throw new ToolFailure('validation_error', 'content_json: is not valid JSON', 'Pass content_json as an object {"type": "doc", "content": [...]}.');
      }
    }
    interface Message {
      id: string;
      channel_id?: string;
      card_origin?: string | null;
      mentioned_user_ids?: string[];
    }
    let message: Message;
    try {
      message = await api.post<Message>(`/channels/${encodeURIComponent(args.channel_id)}/messages`, {
        content: args.content,
        ...(contentJson === undefined ? {} : { content_json: contentJson }),
      });
    } catch (error) {
      if (error instanceof ToolFailure && error.code === 'validation_error' && contentJson !== undefined) {
        throw new ToolFailure(error.code, error.message, 'Run compose_block_message on content_json: it names the node at fault and how to fix it.', error.status);
      }
      if (error instanceof ToolFailure && (error.code === 'not_found' || error.code === 'channel_not_found')) {
        throw new ToolFailure(
          error.code,
          error.message,
          'No channel with this id is visible to this key. List channels with inspect_workspace include ["channels"]; a bot must be a member of a private channel to post there.',
          error.status,
        );
      }
      throw error;
    }
    // The server computes card_origin and mentions; the local validator (same
    // module) stands in only if an older server leaves them out.
    const local = contentJson === undefined ? null : compose(contentJson, rules);
    const localValid = local && local.valid ? local : null;
    return {
      message_id: message.id,
      channel_id: message.channel_id ?? args.channel_id,
      card_origin: message.card_origin !== undefined ? message.card_origin : (localValid?.card_origin ?? null),
      mentioned_user_ids: message.mentioned_user_ids ?? localValid?.mentioned_user_ids ?? [],
    };
  },
};
