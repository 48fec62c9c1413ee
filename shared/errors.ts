// One error type for the whole service. Its code comes from one union of the
// documented codes and is rendered as the error envelope by shared/http/errors.ts.

export const ERROR_STATUS = {
  validation_error: 400,
  invite_invalid: 400,
  unauthorized: 401,
  key_expired: 401,
  invalid_credentials: 401,
  forbidden: 403,
  user_limit_reached: 403,
  insufficient_scope: 403,
  channel_archived: 403,
  not_found: 404,
  channel_not_found: 404,
  already_member: 409,
  name_taken: 409,
  conflict: 409,
  idempotency_in_progress: 409,
  idempotency_key_reused: 422,
  gone: 410,
  payload_too_large: 413,
  file_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  too_many_streams: 429,
  agent_chain_limit: 429,
  internal_error: 500,
  not_implemented: 501,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** Codes that exist from a feature level on: the OpenAPI document of a lower level does not list them. */
export const ERROR_SINCE: Partial<Record<ErrorCode, 3>> = {
  invite_invalid: 3,
  invalid_credentials: 3,
  idempotency_in_progress: 3,
  idempotency_key_reused: 3,
  insufficient_scope: 3,
  gone: 3,
  agent_chain_limit: 3,
  channel_archived: 3,
};

export class AppError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = ERROR_STATUS[code];
  }
}

export const notFound = (what: string) => new AppError('not_found', `${what} not found`);
export const forbidden = (message: string) => new AppError('forbidden', message);
export const invalid = (message: string) => new AppError('validation_error', message);

/** Postgres SQLSTATE for a unique violation; mapped by code, never by message text. */
export const isUniqueViolation = (err: unknown, constraint?: string): boolean => {
  const e = err as { code?: string; constraint?: string };
  return e?.code === '23505' && (constraint === undefined || e.constraint === constraint);
};

// Errors that say a dependency (Postgres) cannot be reached right now, as
// opposed to a fault in the request: connection refused or dropped, the
// server shutting down or starting up (57P01 admin_shutdown, 57P02, 57P03
// cannot_connect_now), any connection exception (class 08), too many
// connections, or no pooled connection within knex's acquire timeout.
// A hung dependency is unavailable too: Postgres's statement_timeout (57014
// query_canceled), lock_timeout (55P03), idle_in_transaction_session_timeout
// (25P03), and the client-side bounds whose errors carry only a message
// (shared/db/knex.ts, shared/redis.ts).
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', '57P01', '57P02', '57P03', '53300', '57014', '55P03', '25P03']);
const UNAVAILABLE_MESSAGES = new Set([
  'Connection terminated unexpectedly',
  'Connection terminated',
  'Connection terminated due to connection timeout',
  'timeout expired',
  'Query read timeout',
  'Command timed out',
]);

export function isDependencyUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; name?: string; message?: string; errors?: unknown[] } | null;
  if (!e || typeof e !== 'object') return false;
  if (typeof e.code === 'string' && (UNAVAILABLE_CODES.has(e.code) || e.code.startsWith('08'))) return true;
  if (e.name === 'KnexTimeoutError') return true;
  // node-postgres reports a connection closed under it, and both clients their timeouts, with a message and no
  // code; knex puts the statement before it (`BEGIN; - Query read timeout`).
  if (typeof e.message === 'string') {
    const message = e.message.includes(' - ') ? e.message.slice(e.message.lastIndexOf(' - ') + 3) : e.message;
    if (UNAVAILABLE_MESSAGES.has(message)) return true;
  }
  // A connect attempt to several addresses fails with an AggregateError of them.
  return Array.isArray(e.errors) && e.errors.length > 0 && e.errors.every(isDependencyUnavailable);
}

/** What a request gets while a dependency is away: 503 and when to try again. */
export const RETRY_AFTER_UNAVAILABLE_S = 5;
export const serviceUnavailable = () =>
  new AppError('service_unavailable', 'a service we depend on is unavailable right now: retry shortly', {
    'Retry-After': String(RETRY_AFTER_UNAVAILABLE_S),
  });
