// The HTTP app of one process: the same middleware order whatever the roles,
// so a gateway-only pod answers errors, ops routes and rate limits exactly as
// the API does. services/stack.ts and the tests build it through here.
import Koa, { type Next } from 'koa';
import type Router from '@koa/router';
import { AppError } from '../shared/errors.js';
import type { AppContext, AppState } from '../shared/http/context.js';
import { clientAddress } from '../shared/http/client-address.js';
import { compression } from '../shared/http/compression.js';
import { corsMiddleware } from '../shared/http/cors.js';
import { renderErrors } from '../shared/http/errors.js';
import { opsRoutes } from '../shared/http/ops.js';
import { rateLimit, type HookCheck } from '../shared/http/rate-limit.js';
import { requestContext } from '../shared/http/request-context.js';
import type { Runtime } from '../shared/runtime.js';

/** What the roles of this process put on the HTTP port (a worker-only process puts nothing). */
export interface HttpRoles {
  /** GET /api/v1/stream (services/gateway). */
  gateway?: { middleware(ctx: AppContext, next: Next): Promise<void> };
  /** Every /api/v1 and /hooks route (services/api/routes.ts). */
  api?: Router<AppState>;
  /** The web app's files and client routes, after the API's (services/api/web-app.ts). */
  web?: (ctx: AppContext, next: Next) => Promise<void>;
  /** The remote MCP endpoint and its OAuth endpoints, level 3 (services/remote-mcp.ts). */
  mcp?: (ctx: AppContext, next: Next) => Promise<void>;
  /** Whether a hook takes posts, for the rate limit's key (the API role's hooks). */
  hookTakesPosts?: HookCheck;
}

export function createApp(rt: Runtime, roles: HttpRoles) {
  // Forwarding headers are believed only from TRUSTED_PROXIES (client-address.ts), never by Koa.
  const app = new Koa<AppState>({ proxy: false });
  app.use(clientAddress(rt.config.trustedProxies));
  app.use(requestContext(rt));
  // Outside renderErrors, so error answers keep the CORS headers, and before
  // the rate limit, so preflights (answered here) are not counted.
  if (rt.config.corsOrigins.length > 0) app.use(corsMiddleware(rt.config.corsOrigins));
  // Outside renderErrors too, so error answers are compressed like the rest.
  app.use(compression());
  app.use(renderErrors);
  app.use(opsRoutes);
  app.use(rateLimit(rt, roles.hookTakesPosts));
  if (roles.gateway) app.use(roles.gateway.middleware);
  if (roles.mcp) app.use(roles.mcp);
  if (roles.api) app.use(roles.api.routes());
  if (roles.web) app.use(roles.web);
  app.use(async () => {
    throw new AppError('not_found', 'no such route: see /api/v1/openapi.json');
  });
  app.on('error', (err) => rt.log.debug({ err: err.message }, 'koa error'));
  return app;
}
