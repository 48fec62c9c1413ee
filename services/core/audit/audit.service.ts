import type { Actor } from '../../../shared/auth.js';
import { forbidden } from '../../../shared/errors.js';
import { decodeCursor, pageOf } from '../../../shared/http/envelope.js';
import type { Runtime } from '../../../shared/runtime.js';
import { isAdmin } from '../users/users.policy.js';
import { presentAuditEntry } from './audit.presenter.js';
import type { AuditLogQuery } from './audit.schemas.js';
import * as store from './audit.store.js';

/** GET /audit-log: owners and admins read their workspace's entries, newest first. */
export async function listAuditLog(rt: Runtime, actor: Actor, q: AuditLogQuery) {
  if (!isAdmin(actor)) throw forbidden('only workspace owners and admins read the audit log');
  const rows = await rt.reads.read(actor, (db) =>
    store.listAudit(db, actor.workspaceId, { action: q.action, actorId: q.actor_id, since: q.since, until: q.until, before: decodeCursor(q.cursor), limit: q.limit }),
  );
  return pageOf(rows, q.limit, presentAuditEntry);
}
