// Test helpers for the tool server: a real SDK Client over stdio, spawning the
// server as a user's AI client would.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface McpSession {
  client: Client;
  stderr: () => string;
  close(): Promise<void>;
}

/** Starts a tool server (by default `npx tsx services/mcp/src/main.ts`) with only the given env on top of a minimal one. */
export async function startMcp(env: Record<string, string>, command: { command: string; args: string[] } = { command: 'npx', args: ['tsx', 'services/mcp/src/main.ts'] }): Promise<McpSession> {
  const transport = new StdioClientTransport({
    ...command,
    cwd: REPO_ROOT,
    env: { ...getDefaultEnvironment(), ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: 'axid-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, stderr: () => stderr, close: () => client.close() };
}

export async function withMcp<T>(env: Record<string, string>, run: (client: Client) => Promise<T>): Promise<T> {
  const session = await startMcp(env);
  try {
    return await run(session.client);
  } finally {
    await session.close();
  }
}

export type ToolResult = CallToolResult & { structuredContent?: Record<string, unknown> };

export async function call(client: Client, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args })) as ToolResult;
}

/** The JSON text of a result, parsed. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function json(result: ToolResult): any {
  const first = result.content[0];
  if (!first || first.type !== 'text') throw new Error(`no text content in ${JSON.stringify(result)}`);
  return JSON.parse(first.text);
}

/** A port on which nothing listens. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** An HTTP server that is not Axid: HTML for everything. */
export async function notAxidServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((_req, res) => {
    res.writeHead(404, { 'content-type': 'text/html' });
    res.end('<html><body>Not Found</body></html>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Resolves with the first line of the child's stdout that matches, or rejects on exit or timeout. */
export function waitForLine(child: ChildProcess, pattern: RegExp, timeoutMs = 15_000, output: { text: string } = { text: '' }): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(() => finish(new Error(`timed out waiting for ${pattern}; output so far:\n${output.text}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString();
      let nl;
      while ((nl = buffer.indexOf('\n')) !== -1) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        const match = line.match(pattern);
        if (match) return finish(null, match);
      }
    };
    const onExit = (code: number | null) => finish(new Error(`process exited (${code}) before ${pattern}; output:\n${output.text}`));
    function finish(error: Error | null, match?: RegExpMatchArray) {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.off('exit', onExit);
      if (error) reject(error);
      else resolve(match!);
    }
    child.stdout?.on('data', onData);
    child.on('exit', onExit);
  });
}

/** Runs a command to completion; resolves with its exit code and output. */
export function run(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd ?? REPO_ROOT, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}
