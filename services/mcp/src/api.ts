// The tool server's HTTP client for the Axid API. Every failure becomes a
// ToolFailure carrying a code (the API's own code when the API answered), a
// message and a hint an AI client can act on.

export interface ApiSettings {
  apiKey: string | undefined;
  baseUrl: string;
  /**
   * How requests go out: the network by default; inside the API process (the
   * remote MCP endpoint) a fetch answered by the API's own routes
   * (shared/http/in-process-fetch.ts).
   */
  fetch?: typeof fetch;
  /** Hints that replace the stdio server's (which speak of AXID_API_KEY) where the key came otherwise: the remote endpoint's. */
  hints?: Record<string, string>;
}

export const DEFAULT_BASE_URL = 'http://localhost:3000';
const REQUEST_TIMEOUT_MS = 15_000;
/** Lists are followed page by page up to this many items. */
export const MAX_LIST_ITEMS = 200;
/** How long compose_block_message waits to learn the server's level before answering without it. */
const LEVEL_TIMEOUT_MS = 1500;

export function apiSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): ApiSettings {
  const key = env.AXID_API_KEY?.trim();
  const base = env.AXID_BASE_URL?.trim() || DEFAULT_BASE_URL;
  return { apiKey: key || undefined, baseUrl: base.replace(/\/+$/, '').replace(/\/api\/v1$/, '') };
}

/** A refusal or failure, reported to the AI client as a tool error. */
export class ToolFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly hint: string,
    readonly status?: number,
  ) {
    super(message);
  }

  toJSON() {
    return { code: this.code, message: this.message, hint: this.hint, ...(this.status ? { status: this.status } : {}) };
  }
}

const HINTS: Record<string, string> = {
  unauthorized:
    'The API rejected AXID_API_KEY (mistyped, revoked or from another server). Set a valid key in the "env" block of the MCP client configuration and restart the tool server.',
  key_expired: 'AXID_API_KEY has expired. Create a new key (POST /api/v1/api-keys) and put it in the MCP client configuration.',
  forbidden: 'The key in AXID_API_KEY is not allowed to do this. Use a key of a workspace member with the needed role.',
  insufficient_scope:
    'The key in AXID_API_KEY is a scoped key without the scope this needs (named in the message), or limited to conversations. Make a key with that scope (POST /api/v1/api-keys, from a key that has it) and put it in the MCP client configuration.',
  not_found: 'The object does not exist or the key cannot see it. Use inspect_workspace to list what this key can access.',
  channel_not_found: 'The channel does not exist or the key cannot see it. Use inspect_workspace with include ["channels"].',
  validation_error: 'Fix the field named in the message and call the tool again.',
  rate_limited: 'Too many requests with this key; wait a little and try again.',
  internal_error: 'The Axid server failed; check its logs.',
  service_unavailable: 'The Axid server is starting or a dependency is down; try again shortly.',
};

export function hintFor(code: string): string {
  return HINTS[code] ?? 'See the message for details.';
}

interface Envelope {
  data?: unknown;
  pagination?: { next_cursor: string | null; has_more: boolean };
  error?: { code?: unknown; message?: unknown };
}

export class AxidApi {
  constructor(readonly settings: ApiSettings) {}

  private requireKey(): string {
    if (!this.settings.apiKey) {
      throw new ToolFailure(
        'missing_api_key',
        'AXID_API_KEY is not set, so the tool server cannot call the Axid API.',
        'Add "env": {"AXID_API_KEY": "<key>", "AXID_BASE_URL": "http://localhost:3000"} to this server\'s entry in the MCP client configuration (the owner key is printed on the first `npm start`, or set BOOTSTRAP_ADMIN_KEY), then restart the tool server.',
      );
    }
    return this.settings.apiKey;
  }

  /** One request; resolves with the whole envelope of a 2xx answer. */
  async request(method: string, path: string, body?: unknown): Promise<Envelope> {
    const key = this.requireKey();
    const url = `${this.settings.baseUrl}/api/v1${path}`;
    let res: Response;
    try {
      res = await (this.settings.fetch ?? fetch)(url, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (error) {
      const reason = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
      throw new ToolFailure(
        'unreachable',
        `Could not reach the Axid API at ${this.settings.baseUrl} (${reason}).`,
        `Check AXID_BASE_URL (now ${this.settings.baseUrl}; default ${DEFAULT_BASE_URL}) and that the Axid server is running there (\`npm start\`; it is ready when GET /readyz answers 200).`,
      );
    }
    const text = await res.text();
    let parsed: Envelope | undefined;
    try {
      parsed = text ? (JSON.parse(text) as Envelope) : {};
    } catch {
      parsed = undefined;
    }
    if (res.ok && parsed && typeof parsed === 'object') return parsed;
    const error = parsed?.error;
    if (error && typeof error.code === 'string') {
      const code = error.code;
      const message = typeof error.message === 'string' ? error.message : `HTTP ${res.status}`;
      throw new ToolFailure(code, message, this.settings.hints?.[code] ?? hintFor(code), res.status);
    }
    throw new ToolFailure(
      'unexpected_response',
      `${method} ${url} answered HTTP ${res.status} without an Axid JSON envelope.`,
      `AXID_BASE_URL (${this.settings.baseUrl}) does not seem to point at an Axid server. Set it to the server's base address without /api/v1, e.g. ${DEFAULT_BASE_URL}.`,
      res.status,
    );
  }

  private level: { value: number; at: number } | null = null;

  /**
   * The server's feature level, from the X-Service-Feature-Level header of
   * GET /healthz (no key needed; docs/feature-levels.md), remembered for a
   * minute; null when the server cannot be reached, so offline tools still answer.
   */
  async featureLevel(): Promise<number | null> {
    if (this.level && Date.now() - this.level.at < 60_000) return this.level.value;
    try {
      const res = await (this.settings.fetch ?? fetch)(`${this.settings.baseUrl}/healthz`, { signal: AbortSignal.timeout(LEVEL_TIMEOUT_MS) });
      await res.body?.cancel();
      const value = Number(res.headers.get('x-service-feature-level'));
      if (!Number.isInteger(value) || value < 1) return null;
      this.level = { value, at: Date.now() };
      return value;
    } catch {
      return null;
    }
  }

  async get<T>(path: string): Promise<T> {
    return (await this.request('GET', path)).data as T;
  }

  async post<T>(path: string, body: unknown): Promise<T> {
    return (await this.request('POST', path, body)).data as T;
  }

  /** Follows next_cursor until MAX_LIST_ITEMS items; says whether it stopped early. */
  async list<T>(path: string): Promise<{ items: T[]; truncated: boolean }> {
    const items: T[] = [];
    let cursor: string | null = null;
    for (;;) {
      const sep = path.includes('?') ? '&' : '?';
      const page: Envelope = await this.request('GET', `${path}${sep}limit=${Math.min(200, MAX_LIST_ITEMS)}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      items.push(...((page.data as T[] | undefined) ?? []));
      cursor = page.pagination?.has_more ? page.pagination.next_cursor : null;
      if (!cursor) return { items, truncated: false };
      if (items.length >= MAX_LIST_ITEMS) return { items: items.slice(0, MAX_LIST_ITEMS), truncated: true };
    }
  }
}
