import { z } from 'zod';
import { PageQuery } from '../../../shared/http/envelope.js';
import { AUDIT_ACTIONS } from './audit.store.js';

const Instant = z.iso.datetime({ offset: true }).transform((s) => new Date(s));

export const AuditLogQuery = PageQuery.extend({
  action: z.enum(AUDIT_ACTIONS).optional(),
  actor_id: z.uuid().optional(),
  since: Instant.optional().describe('Entries at or after this time (ISO 8601)'),
  until: Instant.optional().describe('Entries before this time (ISO 8601)'),
});
export type AuditLogQuery = z.infer<typeof AuditLogQuery>;
