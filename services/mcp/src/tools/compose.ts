import { z } from 'zod';
import { BLOCK_NAMES, validateContentJson, type BlockRules, type ValidationResult } from '../../../../shared/blocks/index.js';
import { loadConfig } from '../../../../shared/config.js';

/** The card hosts, read from TRACKER_HOSTS / CODE_HOSTS with the server's defaults and parsing. */
export function blockRulesFromEnv(env: NodeJS.ProcessEnv = process.env): BlockRules {
  const config = loadConfig({ TRACKER_HOSTS: env.TRACKER_HOSTS, CODE_HOSTS: env.CODE_HOSTS });
  return { trackerHosts: config.trackerHosts, codeHosts: config.codeHosts };
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

export const composeTool = {
  name: 'compose_block_message',
  config: {
    title: 'Validate a block message',
    description:
      'Checks a rich-text message document (content_json) with exactly the validator the Axid server applies when a message is posted, offline (no key, no network). ' +
      'A document is {"type": "doc", "content": [...nodes]} in ProseMirror JSON; a block node is {"type": "block_<name>", "attrs": {"blockName": "<name>", "version": 1, "props": {...}}} ' +
      `with <name> one of ${BLOCK_NAMES.join(', ')}; a mention is {"type": "mention", "attrs": {"id": "<user id>"}}. ` +
      'Example: {"type":"doc","content":[{"type":"block_button_group","attrs":{"blockName":"button_group","version":1,"props":{"buttons":[{"label":"Open","url":"https://example.com"}]}}}]}. ' +
      'Valid: {valid: true, preview, card_origin, mentioned_user_ids}. Invalid: {valid: false, error_code, message (names the node path), path, hint}: fix and call again before send_test_message.',
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
      error_code: z.string().optional(),
      message: z.string().optional(),
      path: z.string().optional(),
      hint: z.string().optional(),
    },
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  run(rules: BlockRules, args: { content_json: unknown; available_blocks?: string[] | undefined }) {
    // The stored form of the document is the server's business, not part of the answer.
    const { document: _stored, ...result } = compose(args.content_json, rules, args.available_blocks) as ValidationResult & { document?: unknown };
    return result;
  },
};
