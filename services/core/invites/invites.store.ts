import type { Db } from '../../../shared/db/knex.js';
import type { InviteRow } from './invites.presenter.js';

const live = (db: Db) => db<InviteRow>('invites').whereNull('used_at').whereNull('revoked_at');

export const insertInvite = async (db: Db, row: Pick<InviteRow, 'workspace_id' | 'token_hash' | 'role' | 'email' | 'created_by' | 'expires_at'>): Promise<InviteRow> => {
  const [created] = await db<InviteRow>('invites').insert(row as never).returning('*');
  return created as InviteRow;
};

export const listLiveInvites = (db: Db, workspaceId: string, o: { after?: number; limit: number }) =>
  live(db)
    .where({ workspace_id: workspaceId })
    .where('expires_at', '>', db.fn.now())
    .modify((q) => {
      if (o.after !== undefined) q.where('seq', '>', o.after);
    })
    .orderBy('seq')
    .limit(o.limit + 1);

export const revokeInvite = (db: Db, workspaceId: string, id: string) =>
  live(db).where({ workspace_id: workspaceId, id }).update({ revoked_at: db.fn.now() });

/** The unused, unrevoked, unexpired invite with this token (a first look, without a lock). */
export const findLiveInvite = (db: Db, tokenHash: string): Promise<InviteRow | undefined> =>
  live(db).where({ token_hash: tokenHash }).where('expires_at', '>', db.fn.now()).first();

/** The unused, unrevoked invite with this token, locked until the acceptance commits. */
export const lockInviteByToken = (db: Db, tokenHash: string): Promise<InviteRow | undefined> =>
  live(db).where({ token_hash: tokenHash }).forUpdate().first();

export const markUsed = (db: Db, id: string, userId: string) => db('invites').where({ id }).update({ used_at: db.fn.now(), used_by: userId });

/** A removed member's invites end with them. */
export const revokeInvitesBy = (db: Db, userId: string) => live(db).where({ created_by: userId }).update({ revoked_at: db.fn.now() });
