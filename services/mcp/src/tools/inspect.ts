import { z } from 'zod';
import { ToolFailure, type AxidApi } from '../api.js';

export const INSPECT_SECTIONS = ['workspace', 'me', 'channels', 'members', 'subscriptions'] as const;
type Section = (typeof INSPECT_SECTIONS)[number];

const object = z.record(z.string(), z.unknown());

export const inspectTool = {
  name: 'inspect_workspace',
  config: {
    title: 'Inspect the Axid workspace',
    description:
      'Read-only snapshot of what the key in AXID_API_KEY can see. "include" picks sections: "workspace" (id, name, settings), "me" (the key\'s own user: id, name, is_agent, role), ' +
      '"channels" (channels the key may access: id, name, is_private, is_default, ...), "members" (workspace members, humans and bots), ' +
      '"subscriptions" (the key\'s own event subscriptions: id, url, events, status; a server at feature level 2 has none and the section is left out). Default: all five. ' +
      'Use it to find channel ids for send_test_message or user ids for mentions.',
    inputSchema: {
      include: z
        .array(z.enum(INSPECT_SECTIONS))
        .min(1)
        .optional()
        .describe('Sections to include, e.g. ["channels"]. Default: ["workspace", "me", "channels", "members", "subscriptions"].'),
    },
    outputSchema: {
      workspace: object.optional(),
      me: object.optional(),
      channels: z.array(object).optional(),
      members: z.array(object).optional(),
      subscriptions: z.array(object).optional(),
      truncated: z.array(z.string()).optional().describe('Lists cut at 200 items.'),
    },
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  },
  async run(api: AxidApi, args: { include?: Section[] | undefined }) {
    const include = new Set<Section>(args.include ?? INSPECT_SECTIONS);
    const result: Record<string, unknown> = {};
    const truncated: string[] = [];
    const listInto = async (section: Section, path: string) => {
      const { items, truncated: cut } = await api.list<Record<string, unknown>>(path);
      result[section] = items;
      if (cut) truncated.push(section);
    };
    await Promise.all([
      include.has('workspace') && api.get<Record<string, unknown>>('/workspaces/current').then((w) => (result.workspace = w)),
      include.has('me') && api.get<Record<string, unknown>>('/users/me').then((me) => (result.me = me)),
      include.has('channels') && listInto('channels', '/channels'),
      include.has('members') && listInto('members', '/users'),
      // Level 3 only: at level 2 the path is 404 and there is nothing to list.
      include.has('subscriptions') &&
        listInto('subscriptions', '/event-subscriptions').catch((err: unknown) => {
          if (!(err instanceof ToolFailure && err.code === 'not_found')) throw err;
        }),
    ]);
    if (truncated.length) result.truncated = truncated;
    // Sections in a stable order.
    return Object.fromEntries([...INSPECT_SECTIONS, 'truncated'].filter((k) => k in result).map((k) => [k, result[k]]));
  },
};
