import type { Next } from 'koa';
import { AppError, isDependencyUnavailable, serviceUnavailable, type ErrorCode } from '../errors.js';
import type { AppContext } from './context.js';

// Errors thrown by Koa's own helpers and body parsers carry only a status.
const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: 'validation_error',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
};

function toAppError(err: unknown): AppError | null {
  if (err instanceof AppError) return err;
  if (isDependencyUnavailable(err)) return serviceUnavailable();
  const e = err as { status?: number; statusCode?: number; expose?: boolean; type?: string; message?: string };
  // co-body (under koa-body) throws a SyntaxError with status 400 and no type for bad JSON.
  if (e?.type === 'entity.parse.failed' || (err instanceof SyntaxError && e.status === 400)) return new AppError('validation_error', 'body: malformed JSON');
  if (e?.type === 'entity.too.large') return new AppError('payload_too_large', 'the request body is too large');
  const code = e?.status !== undefined ? CODE_BY_STATUS[e.status] : undefined;
  if (code && e.expose) return new AppError(code, e.message ?? code);
  return null;
}

/** The client closed its connection (or aborted its request) before the answer. */
const clientWentAway = (ctx: AppContext) => ctx.req.aborted || ctx.req.socket?.destroyed === true;

/**
 * Renders every error as the envelope. It sits inside the middleware that sets
 * the service headers and never hands an error back to Koa, whose default
 * handler would drop them.
 */
export async function renderErrors(ctx: AppContext, next: Next): Promise<void> {
  try {
    await next();
  } catch (err) {
    let appError = err instanceof AppError ? err : null;
    if (!appError && clientWentAway(ctx)) {
      // Not our fault and nobody to answer: not a 500 (the status is for the metrics and access log).
      ctx.state.rt.log.debug({ req_id: ctx.state.requestId, route: ctx.state.route }, 'client went away');
      appError = new AppError('validation_error', 'the request ended before it was read whole');
    }
    if (!appError && isDependencyUnavailable(err)) ctx.state.rt.metrics.dependencyErrors.inc({ dependency: 'postgres' });
    appError ??= toAppError(err);
    if (!appError) {
      // The route's pattern, not its path: a path may hold a hook id (the logger redacts what slips through).
      ctx.state.rt.log.error({ err, req_id: ctx.state.requestId, route: ctx.state.route ?? 'unmatched' }, 'unexpected error');
      appError = new AppError('internal_error', `something went wrong on our side (request ${ctx.state.requestId})`);
    }
    ctx.status = appError.status;
    ctx.set(appError.headers);
    ctx.body = { error: { code: appError.code, message: appError.message } };
  }
}
