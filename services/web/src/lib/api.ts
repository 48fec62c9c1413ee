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

export const errorMessage = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * Uploads a file with XMLHttpRequest: fetch() reports no upload progress.
 * Same origin, so `connect-src 'self'` allows it.
 */
export function uploadFile(file: File, key: string, onProgress: (fraction: number) => void): Promise<{ id: string; name: string; size: number; content_type: string }> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', '/api/v1/files');
    xhr.setRequestHeader('Authorization', `Bearer ${key}`);
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onload = () => {
      let body: { data?: { id: string; name: string; size: number; content_type: string } } & ErrorBody = {};
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
