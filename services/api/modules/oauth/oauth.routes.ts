// The consent screen's two calls (contract §15; docs/mcp.md): what an MCP
// client's authorization request asks, and the signed-in person's answer. The
// OAuth endpoints themselves (/authorize, /token, /register, ...) are the MCP
// SDK's, mounted by oauth.http.ts.
import { z } from 'zod';
import { ok } from '../../../../shared/http/envelope.js';
import { dataOf, named, Timestamp } from '../../../../shared/http/responses.js';
import type { RouteTable } from '../../../../shared/http/route.js';
import { SCOPES } from '../../../../shared/scopes.js';
import { describeAuthorization, decideAuthorization } from '../../../core/oauth/oauth.service.js';
import { REMOTE_MCP } from '../../../core/oauth/oauth.level.js';

const Params = z.object({ authorization_id: z.string() });

const OAuthAuthorizationSchema = named(
  'OAuthAuthorization',
  z.strictObject({
    id: z.string(),
    client: z.strictObject({ id: z.string(), name: z.string().describe('Its registered name (chosen by the client: show where it sends the answer too)'), uri: z.string().nullable() }),
    redirect_uri: z.string(),
    redirect_host: z.string().describe('Where the browser goes with the answer'),
    scopes: z.array(z.enum(SCOPES)).describe('The scopes asked'),
    resource: z.string().nullable(),
    expires_at: Timestamp,
  }),
);

const DecisionBody = z.strictObject({
  approve: z.boolean(),
  scopes: z.array(z.enum(SCOPES)).max(SCOPES.length).optional().describe('The scopes granted, among those asked (default: all asked)'),
  conversation_ids: z.array(z.uuid()).max(100).optional().describe('Only these conversations (default: every one the key reaches)'),
});

export function oauthRoutes(routes: RouteTable) {
  const tag = 'OAuth';
  routes
    .add(
      {
        method: 'get',
        path: '/oauth/authorizations/{authorization_id}',
        scope: 'read',
        summary: "An MCP client's authorization request waiting for the caller's consent: who asks, where the answer goes, which scopes",
        ...REMOTE_MCP,
        tag,
        params: Params,
        response: dataOf(OAuthAuthorizationSchema),
        errors: ['not_found'],
      },
      async ({ rt, params }) => ok(await describeAuthorization(rt, params.authorization_id)),
    )
    .add(
      {
        method: 'post',
        path: '/oauth/authorizations/{authorization_id}',
        scope: 'any_key',
        summary: "Approve or deny an MCP client's authorization request; the answer is the address to send the browser to",
        description:
          'Approving issues a one-time code for the client, bound to the calling key: the key the client then gets is made from it (docs/security.md, "Derived credentials"), with the scopes chosen among those asked and within the calling key\'s (`403 insufficient_scope` otherwise), limited to `conversation_ids` when given (each readable, else 404). Denying sends the client `access_denied`.',
        tag,
        ...REMOTE_MCP,
        params: Params,
        body: DecisionBody,
        response: dataOf(z.strictObject({ redirect_to: z.string() })),
        errors: ['not_found', 'insufficient_scope'],
      },
      async ({ rt, actor, params, body }) => ok(await decideAuthorization(rt, actor, params.authorization_id, body)),
    );
}
