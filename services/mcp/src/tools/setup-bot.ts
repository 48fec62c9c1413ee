import { z } from 'zod';
import { ToolFailure, type AxidApi } from '../api.js';

export const setupBotTool = {
  name: 'setup_axid_bot',
  config: {
    title: 'Create an Axid bot',
    description:
      'Creates a bot (agent) user in the Axid workspace of AXID_API_KEY and issues its first API key. Needs a workspace admin or owner key; a bot key is refused with "forbidden". ' +
      'The result holds bot_user_id, api_key (shown only this once: store it, e.g. as the bot\'s AXID_API_KEY) and the default channels the bot joined automatically. ' +
      'Next: scaffold_bot_project to get runnable bot code.',
    inputSchema: {
      name: z.string().trim().min(1).max(80).describe('The bot\'s user name, 1 to 80 characters, kept exactly as given (people mention it as @name).'),
    },
    outputSchema: {
      bot_user_id: z.string().describe('The bot user id.'),
      name: z.string(),
      api_key: z.string().describe('The bot\'s API key. Shown once.'),
      channels: z.array(z.object({ id: z.string(), name: z.string() })).describe('Channels the bot joined automatically (the workspace\'s default channels).'),
      note: z.string(),
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  },
  async run(api: AxidApi, { name }: { name: string }) {
    interface Created {
      id: string;
      name: string;
      api_key: string;
      joined_channels?: { id: string; name: string }[];
    }
    let created: Created;
    try {
      created = await api.post<Created>('/agents', { name });
    } catch (error) {
      if (error instanceof ToolFailure && error.code === 'forbidden') {
        throw new ToolFailure(
          'forbidden',
          error.message,
          'Creating bots needs a workspace admin or owner key; bot (agent) keys can never create bots. Set AXID_API_KEY to an admin key (the owner key printed on the first `npm start`) and try again.',
          error.status,
        );
      }
      throw error;
    }
    return {
      bot_user_id: created.id,
      name: created.name,
      api_key: created.api_key,
      channels: (created.joined_channels ?? []).map((c) => ({ id: c.id, name: c.name })),
      note: 'Store api_key now: it is not shown again. Run the bot with AXID_API_KEY=<api_key>. Add the bot to more channels with POST /api/v1/channels/{id}/members {user_id}.',
    };
  },
};
