import { list } from '../../../../shared/http/envelope.js';
import type { RouteTable } from '../../../../shared/http/route.js';
import { listOf } from '../../../../shared/http/responses.js';
import { AuditEntrySchema } from '../../../core/audit/audit.presenter.js';
import { AuditLogQuery } from '../../../core/audit/audit.schemas.js';
import { listAuditLog } from '../../../core/audit/audit.service.js';

// Contract §16 ("any level"): the security-relevant actions of the workspace.
export function auditRoutes(routes: RouteTable) {
  routes.add(
    {
      method: 'get',
      path: '/audit-log',
      scope: 'read',
      summary: 'Security-relevant actions, newest first (owners and admins)',
      tag: 'Audit log',
      query: AuditLogQuery,
      response: listOf(AuditEntrySchema),
      errors: ['forbidden'],
    },
    async ({ rt, actor, query }) => list(await listAuditLog(rt, actor, query)),
  );
}
