// One error type for the whole service. Its code comes from one union of the
// documented codes and is rendered as the error envelope by shared/http/errors.ts.

export const ERROR_STATUS = {
  validation_error: 400,
  unauthorized: 401,
  key_expired: 401,
  forbidden: 403,
  user_limit_reached: 403,
  not_found: 404,
  channel_not_found: 404,
  already_member: 409,
  name_taken: 409,
  conflict: 409,
  payload_too_large: 413,
  file_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  too_many_streams: 429,
  internal_error: 500,
  not_implemented: 501,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

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
