#!/usr/bin/env node
// Entry point of the tool server: MCP over stdio. stdout carries protocol
// messages only, so anything that would print there goes to stderr instead.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ConfigError } from '../../../shared/config.js';
import { apiSettingsFromEnv } from './api.js';
import { createServer, SERVER_VERSION } from './server.js';

const log = (message: string) => process.stderr.write(`[axid-mcp] ${message}\n`);
console.log = console.info = console.debug = (...args: unknown[]) => console.error(...args);

async function main() {
  const settings = apiSettingsFromEnv();
  const server = createServer({ api: settings });
  await server.connect(new StdioServerTransport());
  log(`v${SERVER_VERSION} ready on stdio; API ${settings.baseUrl}${settings.apiKey ? '' : ' (AXID_API_KEY not set: only compose_block_message and scaffold_bot_project will work)'}`);
  const close = () => {
    void server.close().finally(() => process.exit(0));
  };
  process.stdin.on('end', close);
  process.on('SIGINT', close);
  process.on('SIGTERM', close);
}

main().catch((error: unknown) => {
  log(error instanceof ConfigError ? error.message : `failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exit(1);
});
