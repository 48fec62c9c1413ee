// Invites (contract §12): an owner or admin makes a link; whoever opens it
// (or only the address it names) creates a person with the invite's role and
// is signed in. The token is 256-bit random, stored hashed, shown once.
import { sendMailSoon } from '../email/email.mailer.js';
import { linkMail } from '../email/email.render.js';
import { randomBytes } from 'node:crypto';
import type { Actor, RequestOrigin } from '../../../shared/auth.js';
import { hashKey } from '../../../shared/auth.js';
import { AppError, forbidden, isUniqueViolation, notFound } from '../../../shared/errors.js';
import { recordEvents } from '../../../shared/events.js';
import { decodeCursor, pageOf } from '../../../shared/http/envelope.js';
import { isUuid } from '../../../shared/ids.js';
import type { Runtime } from '../../../shared/runtime.js';
import { newPasswordHash, signedIn } from '../auth/auth.service.js';
import { emailIdentity } from '../../../shared/identity.js';
import { asGrantor, canCreateUsers } from '../users/users.policy.js';
import { presentUser } from '../users/users.presenter.js';
import { emailTaken, enforceUserLimit, nameTaken } from '../users/users.service.js';
import * as users from '../users/users.store.js';
import { presentInvite, type InviteRow } from './invites.presenter.js';
import type { Knex } from '../../../shared/db/knex.js';
import * as store from './invites.store.js';
import { recordAudit } from '../audit/audit.store.js';

const DEFAULT_HOURS = 168;

const inviteInvalid = (why: string) => new AppError('invite_invalid', why);

export async function createInvite(rt: Runtime, actor: Actor, input: { role?: 'owner' | 'admin' | 'member'; email?: string | null; expires_in_hours?: number }) {
  if (!canCreateUsers(actor)) throw forbidden('only workspace owners and admins invite people');
  const role = input.role ?? 'member';
  if (role === 'owner' && actor.role !== 'owner') throw forbidden('only an owner invites another owner');
  const token = randomBytes(32).toString('base64url');
  const row = await rt.db.transaction(async (trx) => {
    const invite = await store.insertInvite(trx, {
      workspace_id: actor.workspaceId,
      token_hash: hashKey(token),
      role,
      email: input.email?.trim() ?? null,
      created_by: actor.userId,
      expires_at: new Date(Date.now() + (input.expires_in_hours ?? DEFAULT_HOURS) * 3600 * 1000),
    });
    await recordAudit(trx, { workspaceId: actor.workspaceId, action: 'invite.created', actor, target: { type: 'invite', id: invite.id }, details: { role, email: invite.email, expires_at: invite.expires_at } });
    return invite;
  });
  rt.log.info({ invite_id: row.id, by: actor.userId, role }, 'invite created');
  const url = `${rt.config.publicBaseUrl}/#invite=${token}`;
  // Level 3 with mail set up: the invited address gets the link too (contract §14); the answer still shows it once.
  if (row.email) sendMailSoon(rt, { to: row.email, ...linkMail({ subject: 'You are invited to Axid', intro: 'You were invited to join a workspace on Axid. Open this link to choose your name and password:', url, expiresAt: row.expires_at }) }, 'invite');
  return { ...presentInvite(row), url };
}

export async function listInvites(rt: Runtime, actor: Actor, q: { limit: number; cursor?: string }) {
  if (!canCreateUsers(actor)) throw forbidden('only workspace owners and admins see invites');
  const rows = await store.listLiveInvites(rt.db, actor.workspaceId, { after: decodeCursor(q.cursor), limit: q.limit });
  return pageOf(rows, q.limit, presentInvite);
}

export async function revokeInvite(rt: Runtime, actor: Actor, id: string) {
  if (!canCreateUsers(actor)) throw forbidden('only workspace owners and admins revoke invites');
  if (!isUuid(id)) throw notFound('Invite');
  await rt.db.transaction(async (trx) => {
    if ((await store.revokeInvite(trx, actor.workspaceId, id)) === 0) throw notFound('Invite');
    await recordAudit(trx, { workspaceId: actor.workspaceId, action: 'invite.revoked', actor, target: { type: 'invite', id } });
  });
}

/**
 * An invite is worth what its maker may grant now (issue 33): removed, demoted
 * below the invite's role, or no longer able to invite, and it grants nothing
 * (403: ask for a new one). Checked when it is used, whatever happened since.
 */
async function requireGrantor(trx: Knex.Transaction, invite: InviteRow) {
  const maker = await users.findActiveUser(trx, invite.workspace_id, invite.created_by);
  const grantor = maker && asGrantor(maker);
  if (!grantor || !canCreateUsers(grantor) || (invite.role === 'owner' && grantor.role !== 'owner')) {
    throw forbidden(`whoever made this invite may no longer grant its role (${invite.role}): ask for a new invite`);
  }
}

/** POST /auth/accept-invite: a new person from a live invite, signed in with a web key. */
export async function acceptInvite(rt: Runtime, input: { token: string; name: string; display_name?: string | null; email: string; password: string }, origin?: RequestOrigin) {
  // A made-up token costs one indexed read, never a 64 MiB hash; the slow hash
  // runs before the transaction, so the invite's row stays locked only briefly.
  if (!(await store.findLiveInvite(rt.db, hashKey(input.token)))) {
    rt.metrics.signIns.inc({ method: 'invite', outcome: 'invite_invalid' });
    throw inviteInvalid('this invite is unknown, used, revoked or expired: ask for a new one');
  }
  const passwordHash = await newPasswordHash(rt, input.password);
  const email = input.email.trim();
  try {
    return await rt.db.transaction(async (trx) => {
      const invite = await store.lockInviteByToken(trx, hashKey(input.token));
      if (!invite || new Date(invite.expires_at).getTime() <= Date.now()) {
        rt.metrics.signIns.inc({ method: 'invite', outcome: 'invite_invalid' });
        throw inviteInvalid('this invite is unknown, used, revoked or expired: ask for a new one');
      }
      if (invite.email && emailIdentity(invite.email) !== emailIdentity(email)) throw inviteInvalid('this invite is for another email address');
      await requireGrantor(trx, invite);
      await enforceUserLimit(trx, invite.workspace_id);
      const user = await users.insertUser(trx, {
        workspace_id: invite.workspace_id,
        name: input.name,
        display_name: input.display_name ?? null,
        avatar_url: null,
        role: invite.role,
        is_agent: false,
        email,
        password_hash: passwordHash,
      });
      await store.markUsed(trx, invite.id, user.id);
      await recordEvents(rt, trx, [{ type: 'user.created', to: { scope: 'workspace', workspace_id: invite.workspace_id }, data: { user: presentUser(user) } }]);
      rt.metrics.signIns.inc({ method: 'invite', outcome: 'ok' });
      rt.log.info({ invite_id: invite.id, user_id: user.id }, 'invite accepted');
      await recordAudit(trx, { workspaceId: invite.workspace_id, action: 'invite.accepted', actor: { userId: user.id, isAgent: false, origin }, target: { type: 'invite', id: invite.id }, details: { role: invite.role, invited_by: invite.created_by } });
      return signedIn(rt, trx, user);
    });
  } catch (err) {
    if (isUniqueViolation(err, 'users_workspace_name')) throw nameTaken(input.name);
    if (isUniqueViolation(err, 'users_workspace_email')) throw emailTaken();
    throw err;
  }
}
