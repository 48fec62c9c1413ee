// What a reader's answer leaves in the audit log (contract §16). The one
// audit writer (recordAudit, services/core/audit) lands on another branch;
// until then entries go to the structured log, from this one function.
import type { Actor } from '../../../shared/auth.js';
import type { Knex } from '../../../shared/db/knex.js';
import type { Runtime } from '../../../shared/runtime.js';

export async function auditAnswer(
  rt: Runtime,
  _trx: Knex.Transaction,
  actor: Actor,
  action: 'interaction.feedback' | 'interaction.approval',
  target: { type: 'message'; id: string },
  details: Record<string, unknown>,
): Promise<void> {
  // TODO(audit): recordAudit(trx, actor, action, target, details) once services/core/audit is merged.
  rt.log.info({ audit: { workspace_id: actor.workspaceId, actor_id: actor.userId, action, target, details } }, 'audit');
}
