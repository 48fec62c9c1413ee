// The API client: openapi-fetch typed by api-schema.d.ts, which
// services/api/openapi-web-types.ts generates from the API's own route tables (a test
// fails when it is stale). One middleware adds the key, reads the feature
// level and reports refused keys.
import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './api-schema.js';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface ApiHooks {
  key(): string | null;
  onLevel(level: number): void;
  onUnauthorized(code: string, message: string): void;
}

export type Api = ReturnType<typeof createApi>;

export function createApi(baseUrl: string, hooks: ApiHooks) {
  const client = createClient<paths>({ baseUrl });
  const auth: Middleware = {
    onRequest({ request }) {
      const key = hooks.key();
      if (key && !request.headers.has('Authorization')) request.headers.set('Authorization', `Bearer ${key}`);
      return request;
    },
    async onResponse({ response, request }) {
      const level = Number(response.headers.get('X-Service-Feature-Level'));
      if (level) hooks.onLevel(level);
      if (response.status === 401 && request.headers.get('Authorization') === `Bearer ${hooks.key()}`) {
        const body = (await response.clone().json().catch(() => null)) as ErrorBody | null;
        hooks.onUnauthorized(body?.error?.code ?? 'unauthorized', body?.error?.message ?? 'the key was refused');
      }
      return response;
    },
  };
  client.use(auth);
  return client;
}

interface ErrorBody {
  error?: { code?: string; message?: string };
}

type Call = Promise<{ data?: unknown; error?: unknown; response: Response }>;
/** The success body a call is typed with (from the OpenAPI document). */
type SuccessBody<C extends Call> = NonNullable<Awaited<C>['data']>;

function fail(status: number, statusText: string, error: unknown): never {
  const e = (error ?? {}) as ErrorBody;
  throw new ApiError(status, e.error?.code ?? 'error', e.error?.message ?? `${status} ${statusText}`);
}

/** The `data` of a successful answer, typed by the document, or an ApiError carrying the API's own message. */
export async function data<C extends Call>(call: C): Promise<SuccessBody<C> extends { data: infer T } ? T : undefined> {
  const { data: body, error, response } = await call;
  if (error !== undefined || !response.ok) fail(response.status, response.statusText, error);
  return (body as { data?: unknown } | undefined)?.data as SuccessBody<C> extends { data: infer T } ? T : undefined;
}

/** A whole list answer (data and pagination). */
export async function page<C extends Call>(call: C): Promise<SuccessBody<C>> {
  const { data: body, error, response } = await call;
  if (error !== undefined || !response.ok) fail(response.status, response.statusText, error);
  return body as SuccessBody<C>;
}

/** Every page of a list (small lists: channels, users, keys, webhooks). */
export async function all<T>(fetchPage: (cursor: string | undefined) => Promise<{ data: T[]; pagination: { next_cursor: string | null } }>) {
  const out: T[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 50; i++) {
    const p = await fetchPage(cursor);
    out.push(...p.data);
    if (!p.pagination.next_cursor) break;
    cursor = p.pagination.next_cursor;
  }
  return out;
}

/**
 * An error in plain words for people: never "Failed to fetch" or the API's
 * raw message, except a validation reason, which names what to fix.
 */
export function errorMessage(err: unknown): string {
  if (!(err instanceof ApiError)) return "Axid can't be reached. Check your connection and try again.";
  switch (err.code) {
    case 'network':
      return "Axid can't be reached. Check your connection and try again.";
    case 'validation_error':
      return `Please check what you entered: ${err.message.replace(/^[\w.]+: /, '')}.`.replace(/\.\.$/, '.');
    case 'name_taken':
      return 'That name is already taken. Pick another one.';
    case 'already_member':
      return 'They are already a member.';
    case 'forbidden':
      return "You don't have permission to do that.";
    case 'not_found':
    case 'channel_not_found':
      return "That no longer exists, or you can't see it.";
    case 'rate_limited':
    case 'too_many_streams':
      return 'You are going a bit fast. Wait a few seconds and try again.';
    case 'file_too_large':
    case 'payload_too_large':
      return 'That is too large to send.';
    case 'unsupported_media_type':
      return "That kind of file can't be uploaded here.";
    case 'user_limit_reached':
      return 'The workspace has reached its number of people.';
    case 'conflict':
      return 'Someone changed this at the same time. Try again.';
    case 'channel_archived':
      return 'This channel is archived: it is read-only until someone unarchives it.';
    case 'invalid_credentials':
      return 'That email and password do not match. Check them and try again.';
    case 'invite_invalid':
      return 'This link is not valid any more (used or expired). Ask for a new one.';
    case 'unauthorized':
      return 'That key or session was not accepted. Sign in again.';
    case 'key_expired':
      return 'Your session has expired. Sign in again.';
    default:
      return err.status >= 500 || err.status === 0 ? 'Axid is having trouble right now. Try again in a moment.' : 'That did not work. Try again.';
  }
}


/**
 * Uploads a file with XMLHttpRequest: fetch() reports no upload progress.
 * Same origin, so `connect-src 'self'` allows it.
 */
export function uploadFile(file: File, key: string, onProgress: (fraction: number) => void) {
  return uploadTo<{ id: string; name: string; size: number; content_type: string }>('/api/v1/files', file, key, onProgress);
}

/** A multipart upload of one file (field `file`) to an API path, with progress; its answer's `data`. */
export function uploadTo<T>(path: string, file: File, key: string, onProgress: (fraction: number) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', path);
    xhr.setRequestHeader('Authorization', `Bearer ${key}`);
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onload = () => {
      let body: { data?: T } & ErrorBody = {};
      try {
        body = JSON.parse(xhr.responseText) as typeof body;
      } catch {
        /* not JSON */
      }
      if (xhr.status >= 200 && xhr.status < 300 && body.data) resolve(body.data);
      else reject(new ApiError(xhr.status, body.error?.code ?? 'error', body.error?.message ?? `upload failed (${xhr.status})`));
    };
    xhr.onerror = () => reject(new ApiError(0, 'network', 'the upload failed: network error'));
    const form = new FormData();
    form.append('file', file, file.name);
    xhr.send(form);
  });
}
