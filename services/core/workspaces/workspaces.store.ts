import type { Db } from '../../../shared/db/knex.js';
import type { WorkspaceRow } from './workspaces.presenter.js';

export const findWorkspace = (db: Db, id: string) => db<WorkspaceRow>('workspaces').where({ id }).first();

export const findWorkspaceForUpdate = (db: Db, id: string) => db<WorkspaceRow>('workspaces').where({ id }).forUpdate().first();

export const insertWorkspace = async (db: Db, name: string): Promise<WorkspaceRow> => {
  const [row] = await db<WorkspaceRow>('workspaces').insert({ name }).returning('*');
  return row as WorkspaceRow;
};

export const updateWorkspace = async (db: Db, id: string, patch: { name?: string; settings?: object }) => {
  // An empty patch changes nothing (knex refuses an empty UPDATE).
  if (patch.name === undefined && patch.settings === undefined) return (await findWorkspace(db, id)) as WorkspaceRow;
  const [row] = await db<WorkspaceRow>('workspaces')
    .where({ id })
    .update({
      ...(patch.name !== undefined ? { name: patch.name } : {}),
      // jsonb || merges the given settings into the stored ones
      ...(patch.settings !== undefined ? { settings: db.raw('settings || ?::jsonb', [JSON.stringify(patch.settings)]) } : {}),
    } as never)
    .returning('*');
  return row as WorkspaceRow;
};

export const countWorkspaces = async (db: Db) => Number((await db('workspaces').count<{ c: string }>('* as c').first())?.c ?? 0);
