// A small HTTP client for tests: JSON in, JSON (or text) out, headers kept.

export interface Response {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  text: string;
  headers: Headers;
}

/** Every response the suite receives, checked against the OpenAPI document at the end of the run. */
export interface RecordedResponse {
  method: string;
  path: string;
  status: number;
  contentType: string;
  body: unknown;
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
      recordedResponses.push({ method, path: path.split('?')[0]!, status: res.status, contentType: res.headers.get('content-type') ?? '', body: parsed });
    }
    return { status: res.status, body: parsed, text, headers: res.headers };
  }

  get = (path: string, headers?: Record<string, string>) => this.request('GET', path, undefined, headers);
  post = (path: string, body?: unknown, headers?: Record<string, string>) => this.request('POST', path, body ?? {}, headers);
  patch = (path: string, body?: unknown, headers?: Record<string, string>) => this.request('PATCH', path, body ?? {}, headers);
  delete = (path: string, headers?: Record<string, string>) => this.request('DELETE', path, undefined, headers);
}
