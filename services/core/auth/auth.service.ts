// Signing people in (contract §12; docs/security.md): every way in — a
// password, an invite, single sign-on, a one-time link — ends in an ordinary
// API key, a 30-day "web key" named `Web: <date>` that the browser keeps.
import { sendMailSoon } from '../email/email.mailer.js';
import { linkMail } from '../email/email.render.js';
import type { Actor, RequestOrigin } from '../../../shared/auth.js';
import { issueApiKey } from '../../../shared/auth.js';
import type { Db, Knex } from '../../../shared/db/knex.js';
import { AppError, forbidden, invalid, notFound } from '../../../shared/errors.js';
import type { Runtime } from '../../../shared/runtime.js';
import { emailIdentity } from '../../../shared/identity.js';
import { boundedExpiry, childLimits, lockLiveKey, revokeKeyTrees, type ParentKey } from '../api-keys/api-keys.service.js';
import { asGrantor, canRemoveMember, isAdmin } from '../users/users.policy.js';
import type { UserRow } from '../users/users.presenter.js';
import * as users from '../users/users.store.js';
import { recordAudit } from '../audit/audit.store.js';
import { CODE_TTL, issueCode, peekCode, takeCode } from './codes.store.js';
import { dummyHash, hashPassword, verifyPassword } from './passwords.js';
import { attemptKeys, attemptSucceeded, takeAttempt } from './sign-in.limits.js';

const WEB_KEY_DAYS = 30;
/** Keys a browser holds are named so (contract §10 and §12): a password change ends the others. */
export const WEB_KEY_PREFIX = 'Web: ';

/** One password check, timed (the metric also shows an unknown email costs the same hash). */
async function checkPassword(rt: Runtime, password: string, stored: string): Promise<boolean> {
  const end = rt.metrics.passwordChecks.startTimer();
  try {
    return await verifyPassword(password, stored);
  } finally {
    end();
  }
}

/** A new password's hash, timed with the checks (the same scrypt work). */
export async function newPasswordHash(rt: Runtime, password: string): Promise<string> {
  const end = rt.metrics.passwordChecks.startTimer();
  try {
    return await hashPassword(password, rt.config.passwordScryptN);
  } finally {
    end();
  }
}

const resetInvalid = () => new AppError('invalid_credentials', 'this reset link is unknown, used or expired: ask an admin for a new one');

/** A refusal of ours becomes null; a dependency's failure goes on (a 503, not a 401). */
const nullWhenRefused = (err: unknown) => {
  if (err instanceof AppError) return null;
  throw err;
};

const invalidCredentials = () => new AppError('invalid_credentials', 'the email or the password is wrong');

/**
 * A new web key for `user` and the user as they see themselves: the answer of
 * every way in. `parent`: the key a sign-in link was made with; the new key is
 * its child (never expires after it, revoked with it).
 */
export async function signedIn(rt: Runtime, db: Db, user: UserRow, parent?: ParentKey) {
  const ownExpiry = new Date(Date.now() + WEB_KEY_DAYS * 24 * 3600 * 1000);
  const apiKey = await issueApiKey(
    db,
    {
      workspaceId: user.workspace_id,
      userId: user.id,
      name: `${WEB_KEY_PREFIX}${new Date().toISOString().slice(0, 10)}`,
      expiresAt: parent ? boundedExpiry(ownExpiry, parent) : ownExpiry,
      parentKeyId: parent?.id ?? null,
      // A sign-in link's key does and reaches what the key that made the link does, no more.
      limits: parent ? childLimits(parent) : undefined,
    },
    rt.presenters.apiKey,
  );
  return { user: rt.presenters.userTo({ userId: user.id, role: user.role })(user), api_key: apiKey };
}

/**
 * Active people with this identity key (shared/identity.ts emailIdentity),
 * oldest first (an address is unique per workspace, not per deployment).
 * Equality on the stored key: SQL never folds case itself.
 */
export const findPeopleByEmailKey = (db: Db, emailKey: string): Promise<UserRow[]> =>
  db<UserRow>('users')
    .where('email_key', emailKey)
    .whereNull('deactivated_at')
    .where('is_agent', false)
    .orderBy('seq');

/**
 * POST /auth/sign-in. A wrong email and a wrong password answer the same
 * 401 after the same work: one scrypt hash (a dummy one when no one has the
 * address). An address held in several workspaces signs in to the oldest whose
 * password matches.
 */
export async function signIn(rt: Runtime, input: { email: string; password: string }, address: string, origin?: RequestOrigin) {
  // The body's schema refused an address without a key (400 validation_error).
  const emailKey = emailIdentity(input.email)!;
  const subjects = attemptKeys({ emailKey, address });
  await takeAttempt(rt, subjects);
  const candidates = (await findPeopleByEmailKey(rt.db, emailKey)).filter((u) => u.password_hash);
  let user: UserRow | undefined;
  if (candidates.length === 0) await checkPassword(rt, input.password, await dummyHash(rt.config.passwordScryptN));
  for (const candidate of candidates) {
    if (await checkPassword(rt, input.password, candidate.password_hash!)) {
      user = candidate;
      break;
    }
  }
  if (!user) {
    rt.metrics.signIns.inc({ method: 'password', outcome: 'invalid_credentials' });
    rt.log.info({ method: 'password', outcome: 'invalid_credentials', address, known_email: candidates.length > 0 }, 'sign-in');
    // An address no one has belongs to no workspace: the log line above keeps it.
    const [known] = candidates;
    if (known) await recordAudit(rt.db, { workspaceId: known.workspace_id, action: 'auth.sign_in_failed', actor: null, origin, target: { type: 'user', id: known.id }, details: { method: 'password' } });
    throw invalidCredentials();
  }
  await attemptSucceeded(rt, subjects);
  const person = user;
  const result = await rt.db.transaction(async (trx) => {
    const answer = await signedIn(rt, trx, person);
    await recordAudit(trx, { workspaceId: person.workspace_id, action: 'auth.signed_in', actor: { userId: person.id, isAgent: false, origin }, target: { type: 'user', id: person.id }, details: { method: 'password', api_key_id: answer.api_key.id } });
    return answer;
  });
  rt.metrics.signIns.inc({ method: 'password', outcome: 'ok' });
  rt.log.info({ method: 'password', outcome: 'ok', user_id: user.id, address }, 'sign-in');
  return result;
}

/** POST /auth/exchange: a one-time code (the OIDC redirect's, a sign-in link's) for a web key. */
export async function exchangeCode(rt: Runtime, code: string, origin?: RequestOrigin) {
  return rt.db.transaction(async (trx) => {
    const row = await takeCode(trx, code, 'sign_in');
    const user = row && (await users.findActiveUser(trx, row.workspace_id, row.user_id));
    // A sign-in link is worth what the key it was made with is worth now: revoked or expired, nothing.
    const parent = row?.parent_key_id ? await lockLiveKey(trx, row.parent_key_id).catch(nullWhenRefused) : undefined;
    if (!user || parent === null) {
      rt.metrics.signIns.inc({ method: 'code', outcome: 'invalid_code' });
      throw new AppError('invalid_credentials', 'this sign-in code is unknown, used or expired: sign in again');
    }
    rt.metrics.signIns.inc({ method: 'code', outcome: 'ok' });
    rt.log.info({ method: 'code', outcome: 'ok', user_id: user.id }, 'sign-in');
    const answer = await signedIn(rt, trx, user, parent);
    await recordAudit(trx, { workspaceId: user.workspace_id, action: 'auth.signed_in', actor: { userId: user.id, isAgent: false, origin }, target: { type: 'user', id: user.id }, details: { method: 'code', api_key_id: answer.api_key.id } });
    return answer;
  });
}

/** A code that signs `user` in once, for a redirect or a link (its URL carries the code in the fragment). */
export const signInCode = (db: Db, user: Pick<UserRow, 'id' | 'workspace_id'>, ttlSeconds: number) =>
  issueCode(db, { purpose: 'sign_in', workspaceId: user.workspace_id, userId: user.id, ttlSeconds });

/**
 * POST /auth/links: a link that signs the caller in once, in another browser
 * (issue 21: the key itself never goes into a URL). The web app opens it,
 * exchanges the code for a key of its own, and the link is dead.
 */
export async function createSignInLink(rt: Runtime, actor: Actor) {
  // The link dies no later than the key making it, and the key it gives is that key's child.
  const { code, expiresAt } = await rt.db.transaction(async (trx) => {
    const parent = await lockLiveKey(trx, actor.keyId);
    return issueCode(trx, {
      purpose: 'sign_in',
      workspaceId: actor.workspaceId,
      userId: actor.userId,
      ttlSeconds: CODE_TTL.signInLink,
      notAfter: parent.expires_at,
      parentKeyId: parent.id,
    });
  });
  return { url: `${rt.config.publicBaseUrl}/#code=${code}`, expires_at: expiresAt };
}

/** An owner's or admin's answer to a forgotten password: a link the person sets a new one with, never a password. */
export async function createPasswordResetLink(rt: Runtime, actor: Actor, userId: string) {
  if (!isAdmin(actor) || actor.isAgent) throw forbidden('only workspace owners and admins make password-reset links');
  const target = await users.findActiveUser(rt.db, actor.workspaceId, userId);
  if (!target) throw notFound('User');
  if (target.is_agent) throw invalid('user_id: agents have no password');
  if (!canRemoveMember(actor, target)) throw forbidden("only an owner resets an owner's password");
  const { code, expiresAt } = await rt.db.transaction(async (trx) => {
    const issued = await issueCode(trx, { purpose: 'password_reset', workspaceId: target.workspace_id, userId: target.id, ttlSeconds: CODE_TTL.passwordReset, createdBy: actor.userId });
    await recordAudit(trx, { workspaceId: target.workspace_id, action: 'auth.password_reset_link_created', actor, target: { type: 'user', id: target.id }, details: { expires_at: issued.expiresAt } });
    return issued;
  });
  rt.log.info({ user_id: target.id, by: actor.userId }, 'password reset link made');
  const url = `${rt.config.publicBaseUrl}/#reset=${code}`;
  // With mail set up, the person gets the link too (contract §14); the answer still shows it once.
  if (target.email) sendMailSoon(rt, { to: target.email, ...linkMail({ subject: 'Reset your Axid password', intro: 'A workspace admin made a link for you to set a new Axid password:', url, expiresAt }) }, 'password reset');
  return { url, expires_at: expiresAt };
}

/** POST /auth/reset-password: a reset link's code and a new password; every web key of the person ends. */
export async function resetPassword(rt: Runtime, input: { code: string; password: string }, origin?: RequestOrigin) {
  // A made-up code costs one indexed read, never a hash.
  if (!(await peekCode(rt.db, input.code, 'password_reset'))) throw resetInvalid();
  const hash = await newPasswordHash(rt, input.password);
  return rt.db.transaction(async (trx) => {
    const row = await takeCode(trx, input.code, 'password_reset');
    const user = row && (await users.findActiveUser(trx, row.workspace_id, row.user_id));
    if (!user) throw resetInvalid();
    // The link is worth what its maker may do now: removed, demoted, or no longer above the person, it is dead.
    const maker = row.created_by ? await users.findActiveUser(trx, row.workspace_id, row.created_by) : undefined;
    if (!maker || maker.is_agent || !canRemoveMember(asGrantor(maker), user)) {
      rt.metrics.signIns.inc({ method: 'password_reset', outcome: 'maker_gone' });
      throw resetInvalid();
    }
    await trx('users').where({ id: user.id }).update({ password_hash: hash });
    await revokeWebKeys(rt, trx, user, null);
    rt.metrics.signIns.inc({ method: 'password_reset', outcome: 'ok' });
    await recordAudit(trx, { workspaceId: user.workspace_id, action: 'auth.password_reset', actor: { userId: user.id, isAgent: false, origin }, target: { type: 'user', id: user.id } });
    return signedIn(rt, trx, { ...user, password_hash: hash });
  });
}

/**
 * PATCH /users/me with `password`: the current one is needed when there is
 * one (wrong answers count as failed sign-ins); the person's other web keys
 * end, the one making the change stays.
 */
export async function changePassword(rt: Runtime, trx: Knex.Transaction, actor: Actor, user: UserRow, input: { password: string; current_password?: string }, address: string) {
  if (user.is_agent) throw forbidden('agents sign in with keys, not passwords');
  if (user.password_hash) {
    if (input.current_password === undefined) throw invalid('current_password: is required to change the password');
    const subjects = attemptKeys({ userId: user.id, address });
    await takeAttempt(rt, subjects);
    if (!(await checkPassword(rt, input.current_password, user.password_hash))) throw invalid('current_password: is not the current password');
    await attemptSucceeded(rt, subjects);
  }
  const hash = await newPasswordHash(rt, input.password);
  await trx('users').where({ id: user.id }).update({ password_hash: hash });
  await revokeWebKeys(rt, trx, user, actor.keyId);
  await recordAudit(trx, { workspaceId: user.workspace_id, action: 'auth.password_changed', actor, target: { type: 'user', id: user.id } });
  rt.log.info({ user_id: user.id }, 'password changed');
}

/**
 * Ends a person's web keys but `keep`, every key made from them (the keys a
 * session minted end with the session), and the streams opened with them
 * (the api_key.revoked events).
 */
async function revokeWebKeys(rt: Runtime, trx: Knex.Transaction, user: Pick<UserRow, 'id' | 'workspace_id'>, keep: string | null) {
  const webKeys: string[] = await trx('api_keys')
    .where({ user_id: user.id })
    .whereNull('revoked_at')
    .whereLike('name', `${WEB_KEY_PREFIX}%`)
    .modify((q) => {
      if (keep) q.whereNot('id', keep);
    })
    .pluck('id');
  await revokeKeyTrees(rt, trx, webKeys, keep);
}
