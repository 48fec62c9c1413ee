import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

// Secrets never reach a log line (docs/security.md, "Logs"), wherever they
// sit: a path, a query, an error message that quotes a value, any field. What
// is redacted is what the app's secrets look like, not every long word (a
// migration name, a job id, a UUID names a thing and grants nothing):
// - keys and signing secrets carry their prefix: `axid_…`, `axsec_…`;
// - incoming webhook ids (24 random bytes), sign-in codes, invite and reset
//   tokens (32 random bytes) are base64url runs of 32 or more characters, and a
//   random run that long has upper- and lowercase letters (all but about one
//   in ten million), which the names the app gives things never have;
// - the value of a query or fragment parameter named as a secret (`?code=`,
//   `#key=`, `?access_token=`: an identity provider's code has no format of ours);
// - the value of a field named as a secret (SECRET_FIELD), whatever it holds.
const PREFIXED = /\b(?:axid|axsec)_[A-Za-z0-9_-]{20,}/g;
const LONG_RUN = /[A-Za-z0-9_-]{32,}/g;
const SECRET_PARAMETER = /([?&#;](?:key|api_key|token|access_token|id_token|refresh_token|code|state|nonce|code_verifier|invite|reset|secret|password)=)[^&#\s"'<>]+/gi;
const SECRET_FIELD = /^(?:authorization|proxy-authorization|cookie|set-cookie|key|api_key|x-api-key|token|access_token|id_token|refresh_token|secret|signing_secret|password|current_password|new_password|code_verifier|nonce)$/i;
export const REDACTED = '[redacted]';

/** `text` with every key, signing secret, hook id, code or token in it replaced by [redacted]. */
export const redactSecrets = (text: string) =>
  text
    .replace(PREFIXED, REDACTED)
    .replace(SECRET_PARAMETER, `$1${REDACTED}`)
    .replace(LONG_RUN, (run) => (/[a-z]/.test(run) && /[A-Z]/.test(run) ? REDACTED : run));

function redactValue(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return redactSecrets(value);
  if (value === null || typeof value !== 'object') return value;
  // Nothing deeper is looked through, so nothing deeper is written.
  if (depth > 6) return '[too deep]';
  if (value instanceof Error) {
    const e = value as Error & { code?: unknown };
    return { type: e.name, message: redactSecrets(e.message), ...(e.code !== undefined ? { code: e.code } : {}), ...(e.stack ? { stack: redactSecrets(e.stack) } : {}) };
  }
  if (Array.isArray(value)) return value.map((v) => redactValue(v, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, SECRET_FIELD.test(k) && v != null ? REDACTED : redactValue(v, depth + 1)]));
}

/** JSON logs on stdout (stderr for the tool server, whose stdout is the protocol), or a stream (tests). */
export function createLogger(level: string, destination: 1 | 2 | DestinationStream = 1): Logger {
  return pino(
    {
      level,
      base: { service: 'axid' },
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
