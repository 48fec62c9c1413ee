// The companion tool server (services/mcp/README.md): exactly five tools, each with a
// zod input schema, an output schema and JSON results.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { AxidApi, apiSettingsFromEnv, type ApiSettings } from './api.js';
import { guarded } from './results.js';
import { blockRulesFromEnv, composeTool } from './tools/compose.js';
import { invokeCommandTool, listConversationsTool, postMessageTool, reactTool, readConversationTool, searchMessagesTool } from './tools/conversations.js';
import { inspectTool } from './tools/inspect.js';
import { scaffoldTool } from './tools/scaffold.js';
import { sendTestMessageTool } from './tools/send-test-message.js';
import { setupBotTool } from './tools/setup-bot.js';
import type { BlockRules } from '../../../shared/blocks/index.js';

export const SERVER_NAME = 'axid';
export const SERVER_VERSION = '0.1.0';

export interface ServerOptions {
  api?: ApiSettings;
  rules?: BlockRules;
}

export function createServer(options: ServerOptions = {}): McpServer {
  const api = new AxidApi(options.api ?? apiSettingsFromEnv());
  const rules = options.rules ?? blockRulesFromEnv();
  const server = new McpServer(
    { name: SERVER_NAME, version: SERVER_VERSION },
    {
      instructions:
        'Tools for building bots on Axid, a workspace chat for people and AI agents. Typical flow: inspect_workspace → setup_axid_bot (admin key) → scaffold_bot_project → compose_block_message → send_test_message.',
    },
  );
  server.registerTool(setupBotTool.name, setupBotTool.config, guarded((args) => setupBotTool.run(api, args)));
  server.registerTool(scaffoldTool.name, scaffoldTool.config, guarded((args) => scaffoldTool.run(args)));
  server.registerTool(composeTool.name, composeTool.config, guarded((args) => composeTool.run(rules, api, args)));
  server.registerTool(sendTestMessageTool.name, sendTestMessageTool.config, guarded((args) => sendTestMessageTool.run(api, rules, args)));
  server.registerTool(inspectTool.name, inspectTool.config, guarded((args) => inspectTool.run(api, args)));
  return server;
}

/** What to do about a refused key when it is the remote endpoint's Bearer token (an API key, or one an OAuth grant gave). */
const REMOTE_HINTS: Record<string, string> = {
  unauthorized: 'The key or token this client connected with was revoked or is not valid: reconnect (sign in again, or configure a new API key).',
  key_expired: 'The token expired: an OAuth client refreshes it; with an API key, configure a new one.',
  insufficient_scope:
    'The key or token lacks the scope named in the message, or is limited to some conversations. Reconnect and allow that scope on the consent screen, or use an API key that has it.',
  forbidden: "The key's user is not allowed to do this (its workspace role decides).",
};

/**
 * The remote MCP endpoint's server (contract §15; docs/mcp.md): the five tools
 * and the conversation tools, all calling the API with the caller's key. The
 * API process makes one per request, with `api.fetch` answered by its own
 * routes (services/remote-mcp.ts).
 */
export function createRemoteServer(options: Required<ServerOptions>): McpServer {
  options = { ...options, api: { ...options.api, hints: { ...REMOTE_HINTS, ...options.api.hints } } };
  const server = createServer(options);
  const api = new AxidApi(options.api);
  server.registerTool(listConversationsTool.name, listConversationsTool.config, guarded((args) => listConversationsTool.run(api, args)));
  server.registerTool(readConversationTool.name, readConversationTool.config, guarded((args) => readConversationTool.run(api, args)));
  server.registerTool(searchMessagesTool.name, searchMessagesTool.config, guarded((args) => searchMessagesTool.run(api, args)));
  server.registerTool(postMessageTool.name, postMessageTool.config, guarded((args) => postMessageTool.run(api, args)));
  server.registerTool(reactTool.name, reactTool.config, guarded((args) => reactTool.run(api, args)));
  server.registerTool(invokeCommandTool.name, invokeCommandTool.config, guarded((args) => invokeCommandTool.run(api, args)));
  return server;
}
