import { z } from 'zod';
import { ApiKeySchema, IssuedApiKeySchema, issueApiKey } from '../../../../shared/auth.js';
import { fromLevel } from '../../../../shared/feature-level.js';
import { SCOPES } from '../../../../shared/scopes.js';
import { dataOf, listOf } from '../../../../shared/http/responses.js';
import { issueAgentKey, issueChildKey, listKeys, requireManagedAgent, revokeKey } from '../../../core/api-keys/api-keys.service.js';
import { PageQuery, list, ok } from '../../../../shared/http/envelope.js';
import type { RouteTable } from '../../../../shared/http/route.js';
import { recordAudit } from '../../../core/audit/audit.store.js';

// Small enough that routes, schemas and queries read best in one file.

const CreateKeyBody = z.strictObject({
  name: z
    .string()
    .min(1)
    .max(80)
    .refine((s) => s.trim().length > 0, 'must not be only white space'),
  expires_at: z.iso
    .datetime({ offset: true })
    .transform((s) => new Date(s))
    .refine((d) => d.getTime() > Date.now(), 'must be in the future')
    .nullable()
    .optional(),
  // Level 3 (shared/scopes.ts): unknown fields at level 2, refused as before.
  scopes: fromLevel(
    { since: 3 },
    z
      .array(z.enum(SCOPES))
      .min(1)
      .max(SCOPES.length)
      .refine((list) => new Set(list).size === list.length, 'must not repeat a scope')
      .optional()
      .describe('What the key may do; omitted: what the calling key may (docs/security.md, "Scopes")'),
  ),
  conversation_ids: fromLevel(
    { since: 3 },
    z
      .array(z.uuid())
      .min(1)
      .max(100)
      .refine((list) => new Set(list).size === list.length, 'must not repeat a conversation')
      .optional()
      .describe('The only channels and conversations the key reaches, each one the caller can read; omitted: those of the calling key'),
  ),
});

const KeyParams = z.object({ key_id: z.string() });
const UserParams = z.object({ user_id: z.string() });
const UserKeyParams = z.object({ user_id: z.string(), key_id: z.string() });

export function apiKeyRoutes(routes: RouteTable) {
  const tag = 'API keys';
  routes
    .add({ method: 'get', path: '/api-keys', scope: 'read', summary: "List the current user's keys", tag, query: PageQuery, response: listOf(ApiKeySchema) }, async ({ rt, actor, query }) =>
      list(await listKeys(rt, actor.userId, query)),
    )
    .add(
      {
        method: 'post',
        path: '/api-keys',
        scope: 'any_key',
        summary: 'Create a key; the secret is in this response only',
        tag,
        body: CreateKeyBody,
        status: 201,
        response: dataOf(IssuedApiKeySchema),
        until: 2,
      },
      async ({ rt, actor, body }) =>
        ok(
          await rt.db.transaction(async (trx) => {
            const issued = await issueApiKey(trx, { workspaceId: actor.workspaceId, userId: actor.userId, name: body.name, expiresAt: body.expires_at });
            await recordAudit(trx, { workspaceId: actor.workspaceId, action: 'api_key.created', actor, target: { type: 'api_key', id: issued.id }, details: { name: issued.name, prefix: issued.prefix, expires_at: issued.expires_at } });
            return issued;
          }),
        ),
    )
    .add(
      {
        method: 'post',
        path: '/api-keys',
        scope: 'any_key',
        summary: 'Create a key; the secret is in this response only',
        description:
          'Answers 201 with `{data: IssuedApiKey}`. The new key is made from the key calling: it never expires after it (no `expires_at`, or a later one, gives the calling key\'s expiry) and it is revoked when the calling key is revoked (docs/security.md, "Derived credentials"). `scopes` and `conversation_ids` limit it (docs/security.md, "Scopes"), within the calling key\'s: a scope the calling key lacks answers 403 `insufficient_scope`, a conversation it cannot read 404.',
        tag,
        body: CreateKeyBody,
        status: 201,
        response: dataOf(IssuedApiKeySchema),
        errors: ['insufficient_scope', 'not_found'],
        since: 3,
      },
      async ({ rt, actor, body }) =>
        ok(await issueChildKey(rt, actor, { name: body.name, expiresAt: body.expires_at, scopes: body.scopes, conversationIds: body.conversation_ids })),
    )
    .add({ method: 'delete', path: '/api-keys/{key_id}', scope: 'admin', summary: 'Revoke a key', tag, params: KeyParams }, async ({ rt, actor, params }) => {
      await revokeKey(rt, actor, actor.userId, params.key_id);
    })
    // Level 3 (contract §14): owners and admins manage an agent's keys.
    .add(
      { method: 'get', path: '/users/{user_id}/api-keys', scope: 'read', summary: "List an agent's keys (owners and admins)", tag, since: 3, params: UserParams, query: PageQuery, response: listOf(ApiKeySchema), errors: ['forbidden'] },
      async ({ rt, actor, params, query }) => {
        const agent = await requireManagedAgent(rt, actor, params.user_id);
        return list(await listKeys(rt, agent.id, query));
      },
    )
    .add(
      {
        method: 'post',
        path: '/users/{user_id}/api-keys',
        scope: 'admin',
        summary: 'Make a new key for an agent (owners and admins), e.g. for one reactivated without its old keys; the secret is in this response only',
        tag,
        since: 3,
        params: UserParams,
        body: CreateKeyBody,
        status: 201,
        response: dataOf(IssuedApiKeySchema),
        errors: ['forbidden'],
      },
      async ({ rt, actor, params, body }) => {
        const agent = await requireManagedAgent(rt, actor, params.user_id);
        return ok(await issueAgentKey(rt, actor, agent.id, { name: body.name, expiresAt: body.expires_at }));
      },
    )
    .add(
      { method: 'delete', path: '/users/{user_id}/api-keys/{key_id}', scope: 'admin', summary: "Revoke an agent's key and the keys made from it (owners and admins)", tag, since: 3, params: UserKeyParams, errors: ['forbidden'] },
      async ({ rt, actor, params }) => {
        const agent = await requireManagedAgent(rt, actor, params.user_id);
        await revokeKey(rt, actor, agent.id, params.key_id, { user_id: agent.id });
      },
    );
}
