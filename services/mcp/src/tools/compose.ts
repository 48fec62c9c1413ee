import { z } from 'zod';
import { AGENT_BLOCK_NAMES, BLOCK_NAMES, validateContentJson, type BlockRules, type ValidationResult } from '../../../../shared/blocks/index.js';
import { loadConfig } from '../../../../shared/config.js';
import type { AxidApi } from '../api.js';

/** The feature level from which `actionId` buttons are live (contract §9: POST /interactions/actions). */
const ACTIONS_LIVE_SINCE = 3;

/** The card hosts, read from TRACKER_HOSTS / CODE_HOSTS with the server's defaults and parsing. */
export function blockRulesFromEnv(env: NodeJS.ProcessEnv = process.env): BlockRules {
  const config = loadConfig({ TRACKER_HOSTS: env.TRACKER_HOSTS, CODE_HOSTS: env.CODE_HOSTS });
  // The agent blocks (feedback buttons, approval requests) as a level-3 server has them: the tool
  // checks what such a server would take, and says so when the server at AXID_BASE_URL is below it.
  return { trackerHosts: config.trackerHosts, codeHosts: config.codeHosts, agentBlocks: true };
}

/** Validates a document (an object, or JSON text of one) with the server's own validator. */
export function compose(contentJson: unknown, rules: BlockRules, availableBlocks?: string[]): ValidationResult {
  let doc = contentJson;
  if (typeof doc === 'string') {
    try {
      doc = JSON.parse(doc);
    } catch {
      return {
        valid: false,
        error_code: 'validation_error',
        message: 'content_json: is not valid JSON',
        path: '',
        hint: 'Pass the document as a JSON object {"type": "doc", "content": [...]}',
      };
    }
  }
  return validateContentJson(doc, { ...rules, ...(availableBlocks ? { availableBlocks } : {}) });
}

/** The actionId of every button in the document's button groups, in order. */
function actionIds(document: unknown): string[] {
  const ids: string[] = [];
  const walk = (node: unknown) => {
    if (!node || typeof node !== 'object') return;
    const n = node as { type?: unknown; attrs?: { props?: { buttons?: { actionId?: unknown }[] } }; content?: unknown };
    if (n.type === 'block_button_group') for (const b of n.attrs?.props?.buttons ?? []) if (typeof b.actionId === 'string') ids.push(b.actionId);
    if (Array.isArray(n.content)) n.content.forEach(walk);
  };
  walk(document);
  return ids;
}

/**
 * What becomes of a document's actionId buttons on the server at AXID_BASE_URL:
 * live (a click reaches the author's stream as interaction.action) from level 3,
 * rendered disabled below it or when the level is unknown.
 */
async function actionButtons(ids: string[], api: AxidApi) {
  const level = await api.featureLevel();
  const live = level !== null && level >= ACTIONS_LIVE_SINCE;
  const note = live
    ? `The server at ${api.settings.baseUrl} is at feature level ${level}: a click on these buttons reaches the message author's stream as an interaction.action event (POST /api/v1/interactions/actions).`
    : level === null
      ? `The server at ${api.settings.baseUrl} could not be reached to learn its feature level: from level 3 these buttons are live (interaction.action on the author's stream); below it clients render them disabled.`
      : `The server at ${api.settings.baseUrl} is at feature level ${level}: clients render these buttons disabled (button actions come with level 3, FEATURE_LEVEL=3). Use url buttons for a working link.`;
  return { action_ids: ids, live, feature_level: level, note };
}

/** The agent blocks a document uses (block_feedback_buttons, block_approval_request), in order of first use. */
function agentBlocksOf(document: unknown): string[] {
  const names = new Set<string>();
  const walk = (node: unknown) => {
    if (!node || typeof node !== 'object') return;
    const n = node as { type?: unknown; content?: unknown };
    const name = typeof n.type === 'string' ? n.type.slice('block_'.length) : '';
    if ((AGENT_BLOCK_NAMES as readonly string[]).includes(name)) names.add(name);
    if (Array.isArray(n.content)) n.content.forEach(walk);
  };
  walk(document);
  return [...names];
}

/** Whether the server at AXID_BASE_URL takes the agent blocks (feature level 3) and how readers answer them. */
async function agentBlocks(names: string[], api: AxidApi) {
  const level = await api.featureLevel();
  const live = level !== null && level >= ACTIONS_LIVE_SINCE;
  const how =
    'Readers answer with POST /api/v1/interactions/feedback {message_id, value} (feedback buttons) or POST /api/v1/interactions/approvals {message_id, decision, comment?} (approval request); ' +
    'the author gets interaction.feedback / interaction.approval, and the block\'s stored props then carry counts / decision.';
  const note = live
    ? `The server at ${api.settings.baseUrl} is at feature level ${level}: it takes these blocks. ${how}`
    : level === null
      ? `The server at ${api.settings.baseUrl} could not be reached to learn its feature level: these blocks need level 3 (FEATURE_LEVEL=3). ${how}`
      : `The server at ${api.settings.baseUrl} is at feature level ${level}: it refuses these blocks (they come with level 3, FEATURE_LEVEL=3).`;
  return { names, live, feature_level: level, note };
}

export const composeTool = {
  name: 'compose_block_message',
  config: {
    title: 'Validate a block message',
    description:
      'Checks a rich-text message document (content_json) with exactly the validator the Axid server applies when a message is posted, offline (no key, no network). ' +
      'A document is {"type": "doc", "content": [...nodes]} in ProseMirror JSON; a block node is {"type": "block_<name>", "attrs": {"blockName": "<name>", "version": 1, "props": {...}}} ' +
      `with <name> one of ${BLOCK_NAMES.join(', ')}, and at feature level 3 ${AGENT_BLOCK_NAMES.join(', ')} ` +
      '(feedback_buttons props {}; approval_request props {title, description?, approve_label?, deny_label?, expires_at: ISO date-time within 30 days, approver_ids?: user ids}); ' +
      'a mention is {"type": "mention", "attrs": {"id": "<user id>"}} (an @name in the text alone notifies nobody). ' +
      'Example: {"type":"doc","content":[{"type":"block_button_group","attrs":{"blockName":"button_group","version":1,"props":{"buttons":[{"label":"Open","url":"https://example.com"}]}}}]}. ' +
      'Valid: {valid: true, preview, card_origin, mentioned_user_ids, and action_buttons {action_ids, live, feature_level, note} when it has actionId buttons: live from the server\'s feature level 3, disabled below it}. Invalid: {valid: false, error_code, message (names the node path), path, hint}: fix and call again before send_test_message.',
    inputSchema: {
      content_json: z
        .union([z.record(z.string(), z.unknown()), z.string()])
        .describe('The document {"type": "doc", "content": [...]}, as an object (or its JSON text).'),
      available_blocks: z
        .array(z.string())
        .optional()
        .describe('When given, only these block names (without the block_ prefix) are accepted, e.g. ["text", "button_group"].'),
    },
    outputSchema: {
      valid: z.boolean(),
      preview: z.string().optional().describe('Plain-text preview of the message, as notifications show it.'),
      card_origin: z.string().nullable().optional().describe('Origin of the first card block (e.g. https://github.com), or null.'),
      mentioned_user_ids: z.array(z.string()).optional(),
      action_buttons: z
        .object({ action_ids: z.array(z.string()), live: z.boolean(), feature_level: z.number().int().nullable(), note: z.string() })
        .optional()
        .describe("Only for a document with actionId buttons: whether clicks on them are live on the server at AXID_BASE_URL (feature level 3), read from its X-Service-Feature-Level."),
      agent_blocks: z
        .object({ names: z.array(z.string()), live: z.boolean(), feature_level: z.number().int().nullable(), note: z.string() })
        .optional()
        .describe('Only for a document with feedback buttons or an approval request: whether the server at AXID_BASE_URL takes them (feature level 3), and how readers answer them.'),
      error_code: z.string().optional(),
      message: z.string().optional(),
      path: z.string().optional(),
      hint: z.string().optional(),
    },
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async run(rules: BlockRules, api: AxidApi, args: { content_json: unknown; available_blocks?: string[] | undefined }) {
    // The stored form of the document is the server's business, not part of the answer.
    const { document: stored, ...result } = compose(args.content_json, rules, args.available_blocks) as ValidationResult & { document?: unknown };
    const ids = result.valid ? actionIds(stored) : [];
    const agent = result.valid ? agentBlocksOf(stored) : [];
    return {
      ...result,
      ...(ids.length > 0 ? { action_buttons: await actionButtons(ids, api) } : {}),
      ...(agent.length > 0 ? { agent_blocks: await agentBlocks(agent, api) } : {}),
    };
  },
};
