// One-time codes (contract §12 `POST /auth/exchange`; docs/security.md): one
// table and one way to take a code for the OIDC redirect, the sign-in links a
// person makes for a browser, and the password-reset links owners and admins
// make. A code is 256-bit random, stored hashed, and taken by deleting its row,
// so it works once even when two requests race for it.
import { randomBytes } from 'node:crypto';
import { hashKey } from '../../../shared/auth.js';
import type { Db } from '../../../shared/db/knex.js';

export type CodePurpose = 'sign_in' | 'password_reset';

export interface CodeRow {
  code_hash: string;
  purpose: CodePurpose;
  workspace_id: string;
  user_id: string;
  created_at: Date;
  expires_at: Date;
  /** Who made a password-reset link (checked again when it is used). */
  created_by: string | null;
  /** The key a sign-in link was made with: the key the link gives is its child. */
  parent_key_id: string | null;
}

/** Seconds a code lives: the OIDC redirect's is exchanged at once; a link waits for a person. */
export const CODE_TTL = { oidc: 60, signInLink: 10 * 60, passwordReset: 24 * 60 * 60 } as const;

export async function issueCode(
  db: Db,
  o: { purpose: CodePurpose; workspaceId: string; userId: string; ttlSeconds: number; notAfter?: Date | null; createdBy?: string; parentKeyId?: string },
) {
  const code = randomBytes(32).toString('base64url');
  const ttlEnd = Date.now() + o.ttlSeconds * 1000;
  const expiresAt = new Date(o.notAfter ? Math.min(ttlEnd, new Date(o.notAfter).getTime()) : ttlEnd);
  // Expired codes go as new ones come (the index on expires_at keeps this cheap).
  await db('sign_in_codes').where('expires_at', '<', db.fn.now()).delete();
  await db('sign_in_codes').insert({ code_hash: hashKey(code), purpose: o.purpose, workspace_id: o.workspaceId, user_id: o.userId, expires_at: expiresAt, created_by: o.createdBy ?? null, parent_key_id: o.parentKeyId ?? null });
  return { code, expiresAt };
}

/** Takes a live code of `purpose` (it is gone afterwards, live or not); undefined when there is none. */
export async function takeCode(db: Db, code: string, purpose: CodePurpose): Promise<CodeRow | undefined> {
  const [row] = await db<CodeRow>('sign_in_codes').where({ code_hash: hashKey(code), purpose }).delete().returning('*');
  return row && new Date(row.expires_at).getTime() > Date.now() ? (row as CodeRow) : undefined;
}

/** Whether a live code of `purpose` exists, without taking it (a cheap check before slow work). */
export const peekCode = async (db: Db, code: string, purpose: CodePurpose): Promise<boolean> =>
  Boolean(await db('sign_in_codes').where({ code_hash: hashKey(code), purpose }).where('expires_at', '>', db.fn.now()).first('code_hash'));

/** A removed member's codes end with them: those for them and the reset links they made. */
export const deleteCodesOf = (db: Db, userId: string) => db('sign_in_codes').where({ user_id: userId }).orWhere({ created_by: userId }).delete();
