// How every tool answers: JSON as text content (for clients that only read
// text) and the same object as structuredContent (checked against the tool's
// outputSchema). Failures are tool errors (isError) whose JSON carries a code,
// a message and a hint.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ToolFailure } from './api.js';

export function success(value: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }], structuredContent: value };
}

export function failure(error: unknown): CallToolResult {
  const failureObject =
    error instanceof ToolFailure
      ? error.toJSON()
      : { code: 'internal_error', message: error instanceof Error ? error.message : String(error), hint: 'The tool server failed unexpectedly; its log (stderr) has details.' };
  return { content: [{ type: 'text', text: JSON.stringify({ error: failureObject }, null, 2) }], isError: true };
}

/** Runs a tool body; a thrown error becomes a tool error, never a protocol error. */
export function guarded<A>(run: (args: A) => Promise<Record<string, unknown>> | Record<string, unknown>) {
  return async (args: A): Promise<CallToolResult> => {
    try {
      return success(await run(args));
    } catch (error) {
      if (!(error instanceof ToolFailure)) process.stderr.write(`[axid-mcp] tool failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      return failure(error);
    }
  };
}
