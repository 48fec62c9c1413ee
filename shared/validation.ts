// Checking a value against a zod schema, for the HTTP layer (shared/http/route.ts)
// and the domain alike (services/core): one message format, one error code.
import type { z } from 'zod';
import { AppError } from './errors.js';

/** Names the field at fault: `content_json.content.3.attrs.props.buttons.1.url: must start with https://`. */
export function describeIssues(error: z.ZodError, where?: string): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => {
      const path = issue.path.map(String).join('.') || where || 'body';
      const message = /received undefined$/.test(issue.message) ? 'is required' : issue.message;
      return `${path}: ${message}`;
    })
    .join('; ');
}

export function parseOrThrow<T extends z.ZodType>(schema: T, value: unknown, where?: string): z.infer<T> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new AppError('validation_error', describeIssues(parsed.error, where));
  return parsed.data;
}
