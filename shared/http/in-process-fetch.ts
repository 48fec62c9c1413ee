// A `fetch` that answers from an HTTP handler of this process, with no socket:
// the remote MCP endpoint's tools (services/mcp) are clients of the HTTP API,
// and in the API process they call its routes this way, so every tool runs
// the very route a REST caller does (its scope check, validation, role rules,
// audit) and no second implementation exists. light-my-request (Fastify's
// injector, usable with any Node handler) builds the request and response.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { inject } from 'light-my-request';
import type { RequestOrigin } from '../auth.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * `fetch` over `handler`: only the path and query of the URL count. `origin`
 * is the outer request's client, so what the inner request records (the
 * audit log's address and user agent, the rate limit) is the real caller's.
 */
export function inProcessFetch(handler: Handler, origin: RequestOrigin & { requestId?: string }): typeof fetch {
  return async (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, name) => (headers[name] = value));
    if (origin.userAgent) headers['user-agent'] = origin.userAgent;
    if (origin.requestId) headers['x-request-id'] = origin.requestId;
    const answer = await inject(handler, {
      method: (init?.method ?? 'GET') as 'GET',
      url: url.pathname + url.search,
      headers,
      payload: typeof init?.body === 'string' ? init.body : undefined,
      remoteAddress: origin.ip ?? '127.0.0.1',
    });
    const responseHeaders = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value === undefined) continue;
      for (const one of Array.isArray(value) ? value : [value]) responseHeaders.append(name, String(one));
    }
    const empty = answer.statusCode === 204 || answer.statusCode === 304;
    return new Response(empty ? null : answer.rawPayload, { status: answer.statusCode, headers: responseHeaders });
  };
}
