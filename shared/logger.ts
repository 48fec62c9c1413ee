import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

// Secrets never reach a log line (docs/security.md, "Logs"): keys, hook ids
// and tokens are long runs of base64url characters, wherever they sit (a path,
// an error message that quotes a value, any field). UUIDs (ids of messages,
// users, files) are kept: they name things without granting anything.
const SECRET_LIKE = /[A-Za-z0-9_-]{20,}/g;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const REDACTED = '[redacted]';

/** `text` with every key-, hook id- or token-like run replaced by [redacted]. */
export const redactSecrets = (text: string) => text.replace(SECRET_LIKE, (run) => (UUID.test(run) ? run : REDACTED));

function redactValue(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return redactSecrets(value);
  if (depth > 4 || value === null || typeof value !== 'object') return value;
  if (value instanceof Error) {
    const e = value as Error & { code?: unknown };
    return { type: e.name, message: redactSecrets(e.message), ...(e.code !== undefined ? { code: e.code } : {}), ...(e.stack ? { stack: redactSecrets(e.stack) } : {}) };
  }
  if (Array.isArray(value)) return value.map((v) => redactValue(v, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactValue(v, depth + 1)]));
}

/** JSON logs on stdout (stderr for the tool server, whose stdout is the protocol), or a stream (tests). */
export function createLogger(level: string, destination: 1 | 2 | DestinationStream = 1): Logger {
  return pino(
    {
      level,
      base: { service: 'axid' },
      redact: { paths: ['req.headers.authorization', 'key', 'api_key'], censor: REDACTED },
      formatters: { log: (object) => redactValue(object, 0) as Record<string, unknown> },
      hooks: {
        // The message text too (`log.warn({...}, text)`).
        logMethod(args, method) {
          method.apply(this, args.map((a) => (typeof a === 'string' ? redactSecrets(a) : a)) as Parameters<typeof method>);
        },
      },
    },
    typeof destination === 'number' ? pino.destination({ fd: destination, sync: false }) : destination,
  );
}
