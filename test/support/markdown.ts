// Code blocks taken from the project's Markdown files, so that a test runs
// what the documentation shows and the two cannot drift apart.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import MarkdownIt from 'markdown-it';
import { REPO_ROOT } from './mcp.js';

export interface CodeBlock {
  lang: string;
  code: string;
  /** The text of the nearest heading above the block. */
  heading: string;
}

const markdown = new MarkdownIt();

/** Every fenced block of a file (path relative to the repository root), in order. */
export function codeBlocks(file: string): CodeBlock[] {
  const tokens = markdown.parse(readFileSync(path.join(REPO_ROOT, file), 'utf8'), {});
  const blocks: CodeBlock[] = [];
  let heading = '';
  tokens.forEach((token, i) => {
    // A heading is heading_open, its inline text, heading_close.
    if (token.type === 'heading_open') heading = tokens[i + 1]?.children?.filter((c) => c.type === 'text' || c.type === 'code_inline').map((c) => c.content).join('') ?? '';
    if (token.type === 'fence') blocks.push({ lang: token.info.trim(), code: token.content.replace(/\n$/, ''), heading });
  });
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
