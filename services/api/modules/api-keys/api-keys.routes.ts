import { z } from 'zod';
import { ApiKeySchema, IssuedApiKeySchema, issueApiKey } from '../../../../shared/auth.js';
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
});

const KeyParams = z.object({ key_id: z.string() });
const UserParams = z.object({ user_id: z.string() });
const UserKeyParams = z.object({ user_id: z.string(), key_id: z.string() });

export function apiKeyRoutes(routes: RouteTable) {
  const tag = 'API keys';
  routes
    .add({ method: 'get', path: '/api-keys', summary: "List the current user's keys", tag, query: PageQuery, response: listOf(ApiKeySchema) }, async ({ rt, actor, query }) =>
      list(await listKeys(rt.db, actor.userId, query)),
    )
    .add(
      {
        method: 'post',
        path: '/api-keys',
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
        summary: 'Create a key; the secret is in this response only',
        description:
          'Answers 201 with `{data: IssuedApiKey}`. The new key is made from the key calling: it never expires after it (no `expires_at`, or a later one, gives the calling key\'s expiry) and it is revoked when the calling key is revoked (docs/security.md, "Derived credentials").',
        tag,
        body: CreateKeyBody,
        status: 201,
        response: dataOf(IssuedApiKeySchema),
        since: 3,
      },
      async ({ rt, actor, body }) => ok(await issueChildKey(rt, actor, { name: body.name, expiresAt: body.expires_at })),
    )
    .add({ method: 'delete', path: '/api-keys/{key_id}', summary: 'Revoke a key', tag, params: KeyParams }, async ({ rt, actor, params }) => {
      await revokeKey(rt, actor, actor.userId, params.key_id);
    })
    // Level 3 (contract §14): owners and admins manage an agent's keys.
    .add(
      { method: 'get', path: '/users/{user_id}/api-keys', summary: "List an agent's keys (owners and admins)", tag, since: 3, params: UserParams, query: PageQuery, response: listOf(ApiKeySchema), errors: ['forbidden'] },
      async ({ rt, actor, params, query }) => {
        const agent = await requireManagedAgent(rt, actor, params.user_id);
        return list(await listKeys(rt.db, agent.id, query));
      },
    )
    .add(
      {
        method: 'post',
        path: '/users/{user_id}/api-keys',
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
      { method: 'delete', path: '/users/{user_id}/api-keys/{key_id}', summary: "Revoke an agent's key and the keys made from it (owners and admins)", tag, since: 3, params: UserKeyParams, errors: ['forbidden'] },
      async ({ rt, actor, params }) => {
        const agent = await requireManagedAgent(rt, actor, params.user_id);
        await revokeKey(rt, actor, agent.id, params.key_id, { user_id: agent.id });
      },
    );
}
