// The OAuth 2.1 endpoints an MCP client finds from the address alone (contract
// §15; the MCP specification's authorization section; docs/mcp.md): protected
// resource metadata (RFC 9728), authorization server metadata (RFC 8414),
// dynamic client registration (RFC 7591), /authorize (PKCE S256 only, redirect
// URIs matched against the registered ones), /token (codes and rotating
// refresh tokens) and /revoke (RFC 7009). They are the MCP SDK's own handlers
// (Express routers), mounted here under Koa: only what they store and decide
// is ours (services/core/oauth), through the provider below. The SDK's
// per-process rate limits are off: the shared one (Redis) applies, as to
// every route.
import express from 'express';
import type { Context } from 'koa';
import { InvalidScopeError, InvalidTargetError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { metadataHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/metadata.js';
import type { AuthorizationParams, OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import { createOAuthMetadata, getOAuthProtectedResourceMetadataUrl, mcpAuthRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { OAuthMetadataSchema, type OAuthClientInformationFull, type OAuthProtectedResourceMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Response } from 'express';
import { authenticate } from '../../../../shared/auth.js';
import type { Runtime } from '../../../../shared/runtime.js';
import { SCOPES, type Scope } from '../../../../shared/scopes.js';
import * as oauth from '../../../core/oauth/oauth.service.js';

/** Where the web app shows an authorization request for consent (services/web/src/ui/oauth-consent.tsx). */
export const consentPath = (id: string) => `/oauth/consent/${encodeURIComponent(id)}`;

/** The paths the SDK's router answers: everything else goes on through Koa. */
const PATHS = /^\/(authorize|token|register|revoke|\.well-known\/oauth-(authorization-server|protected-resource)(\/mcp)?)\/?$/;

/** What the SDK's handlers store and decide through: services/core/oauth. */
class AxidOAuthProvider implements OAuthServerProvider {
  constructor(
    private readonly rt: Runtime,
    private readonly resource: URL,
  ) {}

  get clientsStore() {
    return {
      getClient: (clientId: string) => oauth.findClient(this.rt, clientId),
      registerClient: (client: Omit<OAuthClientInformationFull, 'client_id_issued_at'>) => oauth.registerClient(this.rt, client as OAuthClientInformationFull),
    };
  }

  /** Records the request the SDK validated and sends the browser to the consent screen. */
  async authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: Response): Promise<void> {
    const asked = (params.scopes ?? []).filter(Boolean);
    const unknown = asked.filter((s) => !(SCOPES as readonly string[]).includes(s));
    if (unknown.length) throw new InvalidScopeError(`Unknown scope ${unknown.join(', ')}: Axid's scopes are ${SCOPES.join(', ')}`);
    // RFC 8707: the token is for this server's MCP endpoint (or the API it is part of), nothing else.
    const accepted = [this.resource.href, `${this.resource.href}/`, new URL('/', this.resource).href];
    if (params.resource && !accepted.includes(params.resource.href)) {
      throw new InvalidTargetError(`This server issues tokens for ${this.resource.href} only`);
    }
    const id = await oauth.startAuthorization(this.rt, {
      clientId: client.client_id,
      redirectUri: params.redirectUri,
      codeChallenge: params.codeChallenge,
      state: params.state,
      scopes: asked.length ? (asked as Scope[]) : oauth.DEFAULT_SCOPES,
      resource: params.resource?.href,
    });
    res.redirect(302, new URL(consentPath(id), this.rt.config.publicBaseUrl).href);
  }

  challengeForAuthorizationCode(client: OAuthClientInformationFull, code: string) {
    return oauth.challengeForCode(this.rt, client.client_id, code);
  }

  exchangeAuthorizationCode(client: OAuthClientInformationFull, code: string, _verifier?: string, redirectUri?: string) {
    return oauth.exchangeCode(this.rt, client, code, redirectUri);
  }

  exchangeRefreshToken(client: OAuthClientInformationFull, refreshToken: string, scopes?: string[]) {
    return oauth.refreshGrant(this.rt, client, refreshToken, scopes);
  }

  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const actor = await authenticate(this.rt.db, token, this.rt.access);
    return { token, clientId: actor.keyId, scopes: [...(actor.scopes ?? SCOPES)] };
  }

  revokeToken(client: OAuthClientInformationFull, request: { token: string }) {
    return oauth.revokeToken(this.rt, client, request.token);
  }
}

export interface OAuthEndpoints {
  /** The protected resource metadata's address, for WWW-Authenticate on /mcp's 401s. */
  resourceMetadataUrl: string;
  /** Answers the request if it is one of the OAuth paths; false when it is not. */
  handle(ctx: Context): Promise<boolean>;
}

/**
 * The endpoints, or null when PUBLIC_BASE_URL cannot be an OAuth issuer
 * (plain http off localhost: RFC 8414 wants https). /mcp still takes Bearer
 * API keys then; the log says why OAuth is off.
 */
export function oauthEndpoints(rt: Runtime, resource: URL): OAuthEndpoints | null {
  const issuerUrl = new URL(rt.config.publicBaseUrl.replace(/\/+$/, '') + '/');
  const provider = new AxidOAuthProvider(rt, resource);
  const options = {
    provider,
    issuerUrl,
    resourceServerUrl: resource,
    scopesSupported: [...SCOPES],
    resourceName: 'Axid',
    serviceDocumentationUrl: new URL('/docs', issuerUrl),
    authorizationOptions: { rateLimit: false as const },
    tokenOptions: { rateLimit: false as const },
    clientRegistrationOptions: { rateLimit: false as const },
    revocationOptions: { rateLimit: false as const },
  };
  let metadata;
  try {
    metadata = createOAuthMetadata(options);
  } catch (error) {
    rt.log.warn({ err: (error as Error).message, public_base_url: rt.config.publicBaseUrl }, 'OAuth for MCP clients is off: PUBLIC_BASE_URL must be https (or localhost); /mcp takes API keys only');
    return null;
  }
  const app = express();
  app.disable('x-powered-by');
  app.use(mcpAuthRouter(options));
  // Every client is a public one (services/core/oauth registerClient): the metadata says so.
  const authServer = OAuthMetadataSchema.parse({ ...metadata, token_endpoint_auth_methods_supported: ['none'], revocation_endpoint_auth_methods_supported: ['none'] });
  const resourceMetadata: OAuthProtectedResourceMetadata = {
    resource: resource.href,
    authorization_servers: [metadata.issuer],
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'Axid',
    resource_documentation: options.serviceDocumentationUrl.href,
  };
  // Ahead of the SDK's own: the metadata as above, and the resource's at the root address too (contract §15).
  const front = express();
  front.disable('x-powered-by');
  front.use('/.well-known/oauth-authorization-server', metadataHandler(authServer));
  front.use('/.well-known/oauth-protected-resource', metadataHandler(resourceMetadata));
  front.use(app);

  return {
    resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(resource),
    async handle(ctx) {
      if (!PATHS.test(ctx.path)) return false;
      ctx.state.route = ctx.path;
      ctx.respond = false;
      await new Promise<void>((resolve) => {
        ctx.res.once('close', resolve);
        ctx.res.once('finish', resolve);
        front(ctx.req as express.Request, ctx.res as express.Response, () => {
          // Nothing answered (a method the path does not take): the SDK's routers leave it to us.
          ctx.res.statusCode = 404;
          ctx.res.setHeader('content-type', 'application/json; charset=utf-8');
          ctx.res.end(JSON.stringify({ error: 'not_found', error_description: 'no such OAuth endpoint' }));
        });
      });
      return true;
    },
  };
}
