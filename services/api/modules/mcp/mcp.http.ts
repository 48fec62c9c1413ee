// The remote MCP endpoint (contract §15; docs/mcp.md): POST /mcp, GET /mcp (the
// server's event stream) and DELETE /mcp over Streamable HTTP, the official
// SDK's transport. Stateless: every request gets a server and a transport of
// its own and no session id, so any API replica answers any call of a
// client, across restarts, with nothing to share. The caller is the Bearer
// key (an API key, or the key an OAuth grant gave: the same thing); the tools
// call the API's routes as that key (services/remote-mcp.ts), where its
// scopes are checked. A refused key is a 401 whose WWW-Authenticate points to
// the protected resource metadata, where a client finds how to get a token.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Context, Next } from 'koa';
import { authenticate, bearerToken, type RequestOrigin } from '../../../../shared/auth.js';
import { AppError } from '../../../../shared/errors.js';
import type { AppContext } from '../../../../shared/http/context.js';
import { originOf } from '../../../../shared/http/route.js';
import type { Runtime } from '../../../../shared/runtime.js';
import { oauthEndpoints } from '../oauth/oauth.http.js';

export const MCP_PATH = '/mcp';

export interface RemoteMcpOptions {
  /** A server for one request, whose tools call the API with `token`, on behalf of `origin`. */
  serverFor(token: string, origin: RequestOrigin & { requestId: string }): McpServer;
}

export interface RemoteMcp {
  middleware(ctx: Context, next: Next): Promise<void>;
  /** Ends the open GET streams (graceful shutdown). */
  close(): Promise<void>;
}

export function remoteMcp(rt: Runtime, options: RemoteMcpOptions): RemoteMcp {
  const resource = new URL(MCP_PATH, rt.config.publicBaseUrl);
  const oauth = oauthEndpoints(rt, resource);
  const open = new Set<StreamableHTTPServerTransport>();

  async function serve(ctx: AppContext): Promise<void> {
    ctx.state.route = MCP_PATH;
    const token = bearerToken(ctx.get('authorization'));
    try {
      await authenticate(rt.db, token, rt.access);
    } catch (error) {
      if (error instanceof AppError && error.status === 401) {
        const metadata = oauth ? `, resource_metadata="${oauth.resourceMetadataUrl}"` : '';
        ctx.set('WWW-Authenticate', token ? `Bearer error="invalid_token", error_description="${error.message}"${metadata}` : `Bearer realm="axid"${metadata}`);
      }
      throw error;
    }
    const server = options.serverFor(token!, { ...originOf(ctx), requestId: ctx.state.requestId });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    open.add(transport);
    ctx.respond = false;
    ctx.res.once('close', () => {
      open.delete(transport);
      void transport.close().finally(() => server.close());
    });
    await server.connect(transport);
    await transport.handleRequest(ctx.req, ctx.res);
  }

  return {
    async middleware(ctx, next) {
      if (oauth && (await oauth.handle(ctx))) return;
      if (ctx.path !== MCP_PATH) return next();
      await serve(ctx as AppContext);
    },
    async close() {
      await Promise.all([...open].map((transport) => transport.close()));
    },
  };
}
