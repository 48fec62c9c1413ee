// Route definitions: one declaration gives the Koa route, its validation and
// its OpenAPI entry, so schemas are written once.
import Router, { type RouterMiddleware } from '@koa/router';
import { koaBody } from 'koa-body';
import type { Next } from 'koa';
import { z } from 'zod';
import { authenticate, bearerToken, type Actor, type RequestOrigin } from '../auth.js';
import { AppError, ERROR_SINCE, isDependencyUnavailable, type ErrorCode } from '../errors.js';
import { DEFAULT_FEATURE_LEVEL, existsAt, fieldsAbsentAt, type FeatureLevel, type LevelSpan } from '../feature-level.js';
import type { Runtime } from '../runtime.js';
import type { AppContext, AppState } from './context.js';
import { compressedJson, takesEncoding } from './compression.js';
import { JsonText } from './envelope.js';
import { checkInput } from './input.js';
import { IDEMPOTENCY, IDEMPOTENCY_HEADER, REPLAYED_HEADER, checkKey, fingerprintOf, runIdempotent } from './idempotency.js';
import { parseOrThrow } from '../validation.js';
import { requireScope, type RouteScope } from '../scopes.js';

export type Method = 'get' | 'post' | 'patch' | 'put' | 'delete';

export interface RouteSpec<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
  R extends z.ZodType | undefined = z.ZodType | undefined,
> extends LevelSpan {
  method: Method;
  /** OpenAPI-style path relative to the table's prefix: `/channels/{channel_id}`. */
  path: string;
  summary: string;
  /** Longer prose for the document; without it the document describes the route from its declaration. */
  description?: string;
  tag: string;
  /**
   * The JSON body of the success status(es), `dataOf(X)` or `listOf(X)` from
   * shared/http/responses.ts; the handler's result is typed by it. None: 204,
   * or a body of media type `produces`.
   */
  response?: R;
  /** Media type of a success body that is not JSON (the reference page, the compatible webhook's `ok`); the document describes it as a string. */
  produces?: string[];
  /**
   * Error codes this route answers besides the ones its declaration implies
   * (services/api/openapi.ts `impliedErrors`: a key → 401, input → 400, ...).
   */
  errors?: ErrorCode[];
  /** `key` (default): Bearer API key required; `none`: public (webhook posting). */
  auth?: 'key' | 'none';
  /**
   * The scope a key needs to call this route (shared/scopes.ts; docs/security.md,
   * "Scopes"). Every route declares one, test/unit/route-scopes.test.ts holds
   * them to the kind of route:
   * - `read`: reads (GET) of what the caller can see;
   * - `messages:write`: posting, editing, deleting and reacting to messages,
   *   typing, read markers, answering interactions;
   * - `channels:write`: making and changing channels and conversations, their
   *   members, incoming webhooks;
   * - `files:write`: uploads;
   * - `events`: event subscriptions (the stream declares it too: services/gateway);
   * - `admin`: the workspace, its people and agents, invites, one's own
   *   profile, password and keys;
   * - `any_key`: any valid key, whatever its scopes (what it makes is narrowed
   *   to the calling key: POST /api-keys, POST /auth/links);
   * - `public`: no key (`auth: 'none'` routes, and only they).
   * The check runs right after the key is read, before the body; the route's
   * role rules still run after it, so a scope never grants more than the role.
   */
  scope: RouteScope;
  params?: P;
  query?: Q;
  body?: B;
  /** Success status; 204 when the handler returns nothing. */
  status?: number;
  /** false: the route answers only errors (POST /interactions/actions, 501 until button actions exist). */
  succeeds?: false;
  /** Other success statuses the handler may answer with `Reply` (documented too). */
  alsoStatus?: number[];
  /** Other success statuses the handler may answer with `Reply`, each with a body of its own (a scheduled post's 202), at the levels of its span. */
  otherResponses?: ({ status: number; response: z.ZodType } & LevelSpan)[];
  /** Body media types accepted besides JSON (the compatible webhook takes forms). */
  form?: boolean;
  /** Handles its own body (multipart uploads): no body parser runs. */
  rawBody?: boolean;
  /** The multipart fields a rawBody route reads, for the document (default: the binary `file`). */
  multipartFields?: Record<string, 'text' | 'binary'>;
  /**
   * Honours `Idempotency-Key` (level 3, shared/http/idempotency.ts), keyed per
   * caller: the key's user (`actor`) or the webhook of the path (`webhook`).
   */
  idempotent?: 'actor' | 'webhook';
  /**
   * Whether the caller may still make this request, run before anything else
   * (an Idempotency-Key's stored answer included): a key is checked by
   * authenticating; a webhook that is gone must answer 404, not replay its 201.
   */
  checkCaller?: (req: { rt: Runtime; params: z.infer<P> }) => Promise<void>;
  // `since` / `until` (LevelSpan): the feature levels the route exists at. A
  // route outside the table's level is neither served (its path answers 404
  // `not_found`, like any unknown path) nor documented.
}

export interface RouteRequest<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  rt: Runtime;
  ctx: AppContext;
  /** The authenticated caller (routes with `auth: 'key'`). */
  actor: Actor;
}

/** What a handler returns: the declared body, one already rendered, a `Reply`, or nothing (204). */
type Result<R> = R extends z.ZodType ? z.infer<R> | JsonText | Reply<z.infer<R>> : unknown;
type Handler<P, Q, B, R> = (req: RouteRequest<P, Q, B>) => Result<R> | Promise<Result<R>>;

const JSON_LIMIT = '1mb';

/** Content codings the body parser decodes (koa-body's inflation), its limit applying to the decoded body. */
const DECODED_CODINGS = ['identity', 'gzip', 'deflate', 'br'];

/**
 * A body in a content coding we do not decode is refused with 415 before it
 * is read: JSON and form bodies may come in DECODED_CODINGS, a raw body (an
 * upload, streamed to storage as sent) only as it is.
 */
function acceptContentEncoding(ctx: AppContext, raw: boolean): void {
  const header = ctx.get('content-encoding');
  if (!header) return;
  const coding = header.trim().toLowerCase();
  const accepted = raw ? ['identity'] : DECODED_CODINGS;
  if (!accepted.includes(coding)) {
    throw new AppError('unsupported_media_type', `Content-Encoding "${header.slice(0, 40)}" is not accepted here: send the body as ${accepted.join(', ')}`);
  }
  ctx.req.headers['content-encoding'] = coding; // the decoder matches names case-sensitively
}

/** The client went away before sending its whole body (renderErrors answers it: shared/http/errors.ts). */
class BodyCut extends Error {}

/**
 * A body read that ends when the client goes away before sending all of it.
 * The decoder of a compressed body (zlib, piped from the request) never ends
 * when the request is cut, and the read waited on it for ever.
 */
function untilClientGone(ctx: AppContext, reading: Promise<void>): Promise<void> {
  const req = ctx.req;
  if (req.complete) return reading;
  return new Promise<void>((resolve, reject) => {
    const gone = () => {
      if (!req.complete) reject(new BodyCut('the client went away before its body was read'));
    };
    reading.then(resolve, reject).finally(() => req.off('close', gone));
    // Gone already (while the middlewares before the read ran): 'close' was emitted then.
    if (req.destroyed) gone();
    else req.once('close', gone);
  });
}

/** Reads the body; one that is not what its Content-Encoding says (a decoder's error) is a 400, not a 500. */
async function readBody(ctx: AppContext, parse: (ctx: AppContext, next: Next) => Promise<void>): Promise<void> {
  try {
    await untilClientGone(ctx, parse(ctx, noNext));
  } catch (err) {
    if (err instanceof BodyCut) throw err;
    const e = err as { status?: number; code?: unknown };
    const coding = ctx.get('content-encoding');
    if (e?.status === undefined && coding && coding !== 'identity' && !(err instanceof AppError)) {
      throw new AppError('validation_error', `body: is not valid ${coding} data`);
    }
    throw err;
  }
}

/** An input schema as it is at `level`: fields declared for other levels (`fromLevel`) left out, so they are unknown keys there. */
function inputAt<S extends z.ZodType | undefined>(schema: S, level: FeatureLevel): S {
  if (!(schema instanceof z.ZodObject)) return schema;
  const absent = fieldsAbsentAt(schema.shape, level);
  return (absent.length ? schema.omit(Object.fromEntries(absent.map((name) => [name, true])) as never) : schema) as unknown as S;
}
const noNext = async () => {};


/** The request's client address (behind TRUSTED_PROXIES: shared/http/client-address.ts) and user agent, bounded. */
export const originOf = (ctx: AppContext): RequestOrigin => ({ ip: ctx.ip || null, userAgent: ctx.get('user-agent').slice(0, 512) || null });

/**
 * Sets the answer's body, a JSON value serialized here, once. Handed an
 * object, Koa would serialize it twice: its `length`, which the compressor
 * reads first, stringifies the body to measure it, and the compressor (or
 * Koa's own answer) stringifies it again to send it. Anything but a plain
 * object or array (a string, a Buffer, a stream) goes to Koa as it is.
 */
function setBody(ctx: AppContext, body: unknown): void {
  if (body instanceof JsonText) {
    ctx.type = 'application/json; charset=utf-8';
    // Kept compressed (a kept history page): sent as kept to a client that takes gzip.
    if (body.gzipped && takesEncoding(ctx, 'gzip')) {
      ctx.set('Content-Encoding', 'gzip');
      ctx.body = body.gzipped;
    } else ctx.body = compressedJson(ctx, body.text);
  } else if (Array.isArray(body) || (body !== null && typeof body === 'object' && Object.getPrototypeOf(body) === Object.prototype)) {
    ctx.type = 'application/json; charset=utf-8';
    ctx.body = compressedJson(ctx, JSON.stringify(body));
  } else {
    ctx.body = body;
  }
}

/** A handler result whose status depends on the outcome (201 created, 200 already there). */
export class Reply<T = unknown> {
  constructor(
    readonly status: number,
    readonly body: T,
  ) {}
}

export class RouteTable {
  readonly specs: RouteSpec[] = [];

  /**
   * Tables share one router: each router a request passes through matches
   * the path against every route it holds.
   */
  constructor(
    readonly prefix: string,
    readonly router: Router<AppState>,
    /** The process's feature level: routes declared for other levels are left out. */
    readonly level: FeatureLevel = DEFAULT_FEATURE_LEVEL,
  ) {}

  add<P extends z.ZodType = z.ZodObject<{}>, Q extends z.ZodType = z.ZodObject<{}>, B extends z.ZodType = z.ZodUnknown, R extends z.ZodType | undefined = undefined>(
    spec: RouteSpec<P, Q, B, R>,
    handler: Handler<z.infer<P>, z.infer<Q>, z.infer<B>, R>,
  ): this {
    if (!existsAt(spec, this.level)) return this;
    if ((spec.scope === 'public') !== ((spec.auth ?? 'key') === 'none')) {
      throw new Error(`${spec.method.toUpperCase()} ${spec.path}: scope 'public' is for routes without a key (auth: 'none'), and only for them`);
    }
    // Idempotency-Key exists from its level on: the spec keeps `idempotent` (the document then describes the header) only there.
    const idempotent = spec.idempotent && existsAt(IDEMPOTENCY, this.level) ? spec.idempotent : undefined;
    spec = {
      ...spec,
      body: inputAt(spec.body, this.level),
      query: inputAt(spec.query, this.level),
      idempotent,
      otherResponses: spec.otherResponses?.filter((other) => existsAt(other, this.level)),
      // A code of a later level (ERROR_SINCE) is not this level's: the route never answers it here.
      errors: (idempotent ? [...(spec.errors ?? []), 'idempotency_key_reused' as const, 'idempotency_in_progress' as const] : spec.errors)?.filter(
        (code: ErrorCode) => (ERROR_SINCE[code] ?? 2) <= this.level,
      ),
    };
    this.specs.push(spec as unknown as RouteSpec);
    const koaPath = this.prefix + spec.path.replace(/\{(\w+)\}/g, ':$1');
    const pattern = this.prefix + spec.path;
    const needsKey = (spec.auth ?? 'key') === 'key';
    const parseBody =
      spec.body && !spec.rawBody
        ? (koaBody({
            json: true,
            jsonStrict: true,
            jsonLimit: JSON_LIMIT,
            urlencoded: spec.form ?? false,
            formLimit: JSON_LIMIT,
            text: false,
            multipart: false,
            onError: (err) => {
              throw err;
            },
          }) as unknown as (ctx: AppContext, next: Next) => Promise<void>)
        : null;

    // One middleware per route, its steps in order: name the route (metrics),
    // authenticate, read the body, validate, run the handler, answer.
    const run = async (ctx: AppContext): Promise<void> => {
      ctx.state.route = pattern;
      if (needsKey && ctx.state.authFailure) throw ctx.state.authFailure;
      if (needsKey) {
        ctx.state.actor ??= await authenticate(ctx.state.rt.db, bearerToken(ctx.get('authorization')), ctx.state.rt.access);
        requireScope(ctx.state.actor, spec.scope);
      }
      if (spec.body) acceptContentEncoding(ctx, spec.rawBody ?? false);
      if (parseBody) await readBody(ctx, parseBody);
      // Strings that cannot be stored and runaway nesting, before any schema sees them.
      checkInput(ctx.params, 'path');
      checkInput(ctx.query, 'query');
      if (parseBody) checkInput(ctx.request.body, 'body');
      const params = spec.params ? parseOrThrow(spec.params, ctx.params, 'path') : {};
      const query = spec.query ? parseOrThrow(spec.query, ctx.query, 'query') : {};
      const body = parseBody ? parseOrThrow(spec.body!, ctx.request.body ?? {}, 'body') : undefined;
      // The cached caller is shared by requests; this request's copy carries where it came from.
      let actor: Actor | undefined;
      const requestWith = (rt: Runtime) =>
        ({
          params,
          query,
          body,
          rt,
          ctx,
          get actor(): Actor {
            if (!ctx.state.actor) throw new AppError('unauthorized', 'this route needs an API key');
            return (actor ??= { ...ctx.state.actor, origin: originOf(ctx) });
          },
        }) as RouteRequest<z.infer<P>, z.infer<Q>, z.infer<B>>;
      if (spec.checkCaller) await spec.checkCaller({ rt: ctx.state.rt, params: params as z.infer<P> });
      const key = idempotent ? ctx.get(IDEMPOTENCY_HEADER) : '';
      // A request by a key that may have written: its reads see its writes (shared/db/read-replicas.ts).
      let result: Result<R>;
      let failure: unknown = null;
      try {
        if (idempotent && key !== '') {
          const caller = idempotent === 'actor' ? `u:${ctx.state.actor!.userId}` : `h:${Object.values(params as object)[0]}`;
          const fingerprint = fingerprintOf(spec.method, ctx.path, ctx.request.body);
          const answer = await runIdempotent(ctx.state.rt, { caller, key: checkKey(key), fingerprint }, async (rt) => {
            const created = await handler(requestWith(rt));
            return created instanceof Reply
              ? { status: created.status, body: JSON.stringify(created.body) }
              : { status: spec.status ?? 200, body: created instanceof JsonText ? created.text : JSON.stringify(created) };
          });
          if (answer.replayed) ctx.set(REPLAYED_HEADER, 'true');
          result = new Reply(answer.status, new JsonText(answer.body)) as Result<R>;
        } else {
          result = await handler(requestWith(ctx.state.rt));
        }
      } catch (err) {
        failure = err;
        throw err;
      } finally {
        if (spec.method !== 'get') {
          // The primary did not answer: asking it for its position would make the
          // request wait as long again (a hung server: twice the bound).
          // The commit's listeners drop what it changed from the page cache before the writer is answered (shared/events.ts).
          if (failure !== null && isDependencyUnavailable(failure)) {
            ctx.state.rt.reads.lostTrack();
            await ctx.state.rt.events.settled();
          } else await Promise.all([ctx.state.rt.reads.wrote(ctx.state.actor ?? null), ctx.state.rt.events.settled()]);
        }
      }
      if (result === undefined) {
        ctx.status = 204;
        return;
      }
      if (result instanceof Reply) {
        ctx.status = result.status;
        setBody(ctx, result.body);
        return;
      }
      ctx.status = spec.status ?? 200;
      setBody(ctx, result);
    };

    this.router[spec.method](koaPath, run as RouterMiddleware<AppState>);
    return this;
  }
}
