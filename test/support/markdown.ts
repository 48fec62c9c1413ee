// Code blocks taken from the project's Markdown files, so that a test runs
// what the documentation shows and the two cannot drift apart.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fromMarkdown } from 'mdast-util-from-markdown';
import { REPO_ROOT } from './mcp.js';

export interface CodeBlock {
  lang: string;
  code: string;
  /** The text of the nearest heading above the block. */
  heading: string;
}

/** Every fenced block of a file (path relative to the repository root), in order. */
export function codeBlocks(file: string): CodeBlock[] {
  const tree = fromMarkdown(readFileSync(path.join(REPO_ROOT, file), 'utf8'));
  const blocks: CodeBlock[] = [];
  let heading = '';
  for (const node of tree.children) {
    if (node.type === 'heading') heading = node.children.map((c) => ('value' in c ? c.value : '')).join('');
    if (node.type === 'code') blocks.push({ lang: node.lang ?? '', code: node.value, heading });
  }
  return blocks;
}

/** An MCP client configuration as the READMEs show it. */
export interface McpServerConfig {
  command: string;
  args?: string[];
  env?: Record<string, string>;
}

/** The `mcpServers.axid` entries of a file's JSON blocks. */
export function mcpConfigs(file: string): McpServerConfig[] {
  return codeBlocks(file)
    .filter((b) => b.lang === 'json' && b.code.includes('"mcpServers"'))
    .map((b) => (JSON.parse(b.code) as { mcpServers: { axid: McpServerConfig } }).mcpServers.axid);
}
