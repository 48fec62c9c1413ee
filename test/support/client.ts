// A small HTTP client for tests: JSON in, JSON (or text) out, headers kept.

export interface Response {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  text: string;
  headers: Headers;
  /** The feature level of the server asked (test/support/stack.ts `levelOf`), which the header must say. */
  expectedLevel?: string;
}

/** Base URLs of stacks running at another feature level than the default 2 (test/support/stack.ts registers them). */
export const serverLevels = new Map<string, string>();

/** Every response the suite receives, checked against the OpenAPI document at the end of the run. */
export interface RecordedResponse {
  method: string;
  path: string;
  status: number;
  contentType: string;
  body: unknown;
  /** The server's X-Service-Feature-Level: the document of that level describes the response. */
  level: number;
}
export const recordedResponses: RecordedResponse[] = [];

export class Client {
  constructor(
    readonly baseUrl: string,
    readonly key?: string,
  ) {}

  withKey(key: string | undefined) {
    return new Client(this.baseUrl, key);
  }

  async request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
    const init: RequestInit = { method, headers: { ...headers } };
    const h = init.headers as Record<string, string>;
    if (this.key && !('authorization' in h)) h.authorization = `Bearer ${this.key}`;
    if (body !== undefined) {
      if (typeof body === 'string' || body instanceof Uint8Array) {
        init.body = body as string;
      } else {
        init.body = JSON.stringify(body);
        h['content-type'] ??= 'application/json';
      }
    }
    const res = await fetch(this.baseUrl + path, init);
    const text = await res.text();
    let parsed: unknown = undefined;
    if ((res.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
    if (text.length < 100_000) {
      recordedResponses.push({ method, path: path.split('?')[0]!, status: res.status, contentType: res.headers.get('content-type') ?? '', body: parsed, level: Number(res.headers.get('x-service-feature-level') ?? 2) });
    }
    return { status: res.status, body: parsed, text, headers: res.headers, expectedLevel: serverLevels.get(this.baseUrl) ?? '2' };
  }

  get = (path: string, headers?: Record<string, string>) => this.request('GET', path, undefined, headers);
  post = (path: string, body?: unknown, headers?: Record<string, string>) => this.request('POST', path, body ?? {}, headers);
  patch = (path: string, body?: unknown, headers?: Record<string, string>) => this.request('PATCH', path, body ?? {}, headers);
  put = (path: string, body?: unknown, headers?: Record<string, string>) => this.request('PUT', path, body ?? {}, headers);
  delete = (path: string, headers?: Record<string, string>) => this.request('DELETE', path, undefined, headers);
}
