// Composition of the remote MCP endpoint (contract §15; docs/mcp.md): the API
// role serves it (services/api/modules/mcp), the MCP room supplies its tools
// (services/mcp/src/server.ts createRemoteServer, the very tools of the stdio
// server plus the conversation tools), and the tools' HTTP client is answered
// in-process by the API's own routes (shared/http/in-process-fetch.ts), so a
// tool call is an API call by the caller's key and nothing is implemented
// twice. Only here may the two rooms meet.
import type Router from '@koa/router';
import type { AppState } from '../shared/http/context.js';
import { inProcessFetch } from '../shared/http/in-process-fetch.js';
import type { Runtime } from '../shared/runtime.js';
import { remoteMcp } from './api/modules/mcp/mcp.http.js';
import { createApp } from './app.js';
import { createRemoteServer } from './mcp/src/server.js';

export function remoteMcpEndpoint(rt: Runtime, api: Router<AppState>) {
  // The API's routes with the same middleware as every request (errors, rate limit, access log).
  const routes = createApp(rt, { api }).callback();
  const rules = { trackerHosts: rt.config.trackerHosts, codeHosts: rt.config.codeHosts, agentBlocks: rt.presenters.agentsAtHome };
  return remoteMcp(rt, {
    serverFor: (token, origin) => createRemoteServer({ api: { apiKey: token, baseUrl: rt.config.publicBaseUrl.replace(/\/+$/, ''), fetch: inProcessFetch(routes, origin) }, rules }),
  });
}
