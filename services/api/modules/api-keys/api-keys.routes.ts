import { z } from 'zod';
import { ApiKeySchema, IssuedApiKeySchema, issueApiKey, presentApiKey, type ApiKeyRow } from '../../../../shared/auth.js';
import { dataOf, listOf } from '../../../../shared/http/responses.js';
import { isUuid } from '../../../../shared/ids.js';
import { notFound } from '../../../../shared/errors.js';
import { issueChildKey, revokeKeyTrees } from '../../../core/api-keys/api-keys.service.js';
import { PageQuery, decodeCursor, list, ok, pageOf } from '../../../../shared/http/envelope.js';
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

export function apiKeyRoutes(routes: RouteTable) {
  const tag = 'API keys';
  routes
    .add({ method: 'get', path: '/api-keys', summary: "List the current user's keys", tag, query: PageQuery, response: listOf(ApiKeySchema) }, async ({ rt, actor, query }) => {
      const after = decodeCursor(query.cursor);
      const rows = await rt
        .db<ApiKeyRow>('api_keys')
        .where({ user_id: actor.userId })
        .whereNull('revoked_at')
        .modify((q) => {
          if (after !== undefined) q.where('seq', '>', after);
        })
        .orderBy('seq')
        .limit(query.limit + 1);
      return list(pageOf(rows, query.limit, presentApiKey));
    })
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
      if (!isUuid(params.key_id)) throw notFound('API key');
      await rt.db.transaction(async (trx) => {
        const own = await trx('api_keys').where({ id: params.key_id, user_id: actor.userId }).whereNull('revoked_at').first('id');
        if (!own) throw notFound('API key');
        // Open streams authenticated with this key end (the gateway listens); keys made from it end with it.
        await revokeKeyTrees(rt, trx, [params.key_id]);
        await recordAudit(trx, { workspaceId: actor.workspaceId, action: 'api_key.revoked', actor, target: { type: 'api_key', id: params.key_id } });
      });
    });
}
