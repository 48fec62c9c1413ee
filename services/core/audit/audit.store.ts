// The one audit writer (contract §16, docs/operations.md "Audit log"): every
// service that does a security-relevant action calls recordAudit with its own
// transaction, so the entry commits or rolls back with the action. Nothing
// else writes audit_log. Details never carry a secret: no key, password,
// token, code or hook id (a hook's id is its address; webhookRef names it).
import { createHash } from 'node:crypto';
import type { Actor, RequestOrigin } from '../../../shared/auth.js';
import type { Db } from '../../../shared/db/knex.js';

/** Every action the log knows, by the service that owns the verb. */
export const AUDIT_ACTIONS = [
  'auth.signed_in',
  'auth.sign_in_failed',
  'auth.password_changed',
  'auth.password_reset_link_created',
  'auth.password_reset',
  'api_key.created',
  'api_key.revoked',
  'user.created',
  'member.role_changed',
  'member.email_changed',
  'member.removed',
  'member.reactivated',
  'invite.created',
  'invite.revoked',
  'invite.accepted',
  'webhook.created',
  'webhook.deleted',
  'event_subscription.created',
  'event_subscription.deleted',
  'event_subscription.secret_rotated',
  'channel.made_private',
  'channel.made_public',
  'channel.archived',
  'channel.unarchived',
  'emoji.created',
  'emoji.deleted',
  'retention.changed',
  'import.started',
  'import.finished',
  'export.created',
  'approval.answered',
  'feedback.given',
  'oauth.consented',
  'oauth.denied',
  'oauth.token_issued',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export const AUDIT_TARGET_TYPES = ['user', 'api_key', 'invite', 'webhook', 'event_subscription', 'channel', 'workspace', 'emoji', 'import', 'export', 'message', 'oauth_client'] as const;
export type AuditTargetType = (typeof AUDIT_TARGET_TYPES)[number];

/** Secret words a details key must never be (checked on every write: a slip fails loudly in tests). */
const SECRET_KEYS = /^(key|api_key|secret|password|password_hash|token|code|hook_id|webhook_id|signing_secret)$/i;

export interface AuditEntry {
  workspaceId: string;
  action: AuditAction;
  /** Who did it: the request's caller (its origin comes along), or null where no one is signed in (a failed sign-in, a system job). */
  actor: Pick<Actor, 'userId' | 'isAgent' | 'origin'> | null;
  target?: { type: AuditTargetType; id: string } | null;
  /** What changed, for a reader: names, roles, scopes, before and after. Never a secret. */
  details?: Record<string, unknown>;
  /** Where the request came from when there is no actor (sign-in, accepting an invite). */
  origin?: RequestOrigin;
}

export interface AuditRow {
  id: string;
  seq: number;
  workspace_id: string;
  action: string;
  actor_id: string | null;
  actor_is_agent: boolean;
  target_type: string | null;
  target_id: string | null;
  ip: string | null;
  user_agent: string | null;
  details: Record<string, unknown>;
  created_at: Date;
}

/** A hook named without its id (the id is the hook's secret address): a digest that tells hooks apart. */
export const webhookRef = (webhookId: string) => `hook_${createHash('sha256').update(webhookId).digest('hex').slice(0, 16)}`;

/** The one audit writer: one row, in the caller's transaction. */
export async function recordAudit(trx: Db, entry: AuditEntry): Promise<void> {
  const details = entry.details ?? {};
  for (const name of Object.keys(details)) {
    if (SECRET_KEYS.test(name)) throw new Error(`audit details must not carry a secret (${name})`);
  }
  const origin = entry.actor?.origin ?? entry.origin;
  await trx('audit_log').insert({
    workspace_id: entry.workspaceId,
    action: entry.action,
    actor_id: entry.actor?.userId ?? null,
    actor_is_agent: entry.actor?.isAgent ?? false,
    target_type: entry.target?.type ?? null,
    target_id: entry.target?.id ?? null,
    ip: origin?.ip ?? null,
    user_agent: origin?.userAgent ?? null,
    details: JSON.stringify(details),
  });
}

export interface AuditFilter {
  action?: string;
  actorId?: string;
  since?: Date;
  until?: Date;
  before?: number;
  limit: number;
}

/** A page of a workspace's entries, newest first (limit + 1 rows: the extra says there is more). */
export const listAudit = (db: Db, workspaceId: string, f: AuditFilter): Promise<AuditRow[]> =>
  db<AuditRow>('audit_log')
    .where({ workspace_id: workspaceId })
    .modify((q) => {
      if (f.action !== undefined) q.where('action', f.action);
      if (f.actorId !== undefined) q.where('actor_id', f.actorId);
      if (f.since !== undefined) q.where('created_at', '>=', f.since);
      if (f.until !== undefined) q.where('created_at', '<', f.until);
      if (f.before !== undefined) q.where('seq', '<', f.before);
    })
    .orderBy('seq', 'desc')
    .limit(f.limit + 1);

/** Deletes up to `limit` entries older than `before` (the retention job's batches); how many went. */
export async function pruneAudit(db: Db, before: Date, limit: number): Promise<number> {
  const res = await db.raw(
    `DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE created_at < ? ORDER BY created_at LIMIT ?)`,
    [before, limit],
  );
  return res.rowCount ?? 0;
}
