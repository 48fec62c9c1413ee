import { z } from 'zod';
import { Timestamp, named } from '../../../shared/http/responses.js';
import type { AuditRow } from './audit.store.js';

export const AuditEntrySchema = named(
  'AuditEntry',
  z.strictObject({
    id: z.string(),
    action: z.string().describe('What was done: `auth.signed_in`, `api_key.created`, `member.role_changed`, ... (docs/operations.md, "Audit log")'),
    actor_id: z.string().nullable().describe('Who did it; null where no one was signed in (a failed sign-in) or a job did it'),
    actor_is_agent: z.boolean(),
    target_type: z.string().nullable(),
    target_id: z.string().nullable(),
    ip: z.string().nullable().describe("The client's address, as the API saw it (TRUSTED_PROXIES)"),
    user_agent: z.string().nullable(),
    details: z.record(z.string(), z.unknown()).describe('What changed (names, roles, scopes, before and after); never a secret'),
    created_at: Timestamp,
  }),
);

export const presentAuditEntry = (row: AuditRow): z.infer<typeof AuditEntrySchema> => ({
  id: row.id,
  action: row.action,
  actor_id: row.actor_id,
  actor_is_agent: row.actor_is_agent,
  target_type: row.target_type,
  target_id: row.target_id,
  ip: row.ip,
  user_agent: row.user_agent,
  details: row.details,
  created_at: row.created_at,
});
