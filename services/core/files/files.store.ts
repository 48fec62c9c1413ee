import type { Db } from '../../../shared/db/knex.js';
import { AVATAR_FILE_ID } from '../../../shared/db/migrations/120_file_carriers.js';
import { isUuid } from '../../../shared/ids.js';
import type { FileRow } from './files.presenter.js';

export const insertFile = async (
  db: Db,
  file: Pick<FileRow, 'id' | 'workspace_id' | 'uploader_id' | 'name' | 'size' | 'content_type' | 'storage_key'>,
): Promise<FileRow> => {
  const [row] = await db<FileRow>('files').insert(file).returning('*');
  return row as FileRow;
};

export const findFileInWorkspace = async (db: Db, workspaceId: string, fileId: string): Promise<FileRow | undefined> =>
  isUuid(fileId) ? db<FileRow>('files').where({ id: fileId, workspace_id: workspaceId }).first() : undefined;

export const findFile = async (db: Db, fileId: string): Promise<FileRow | undefined> =>
  isUuid(fileId) ? db<FileRow>('files').where({ id: fileId }).first() : undefined;

/**
 * Ends processing once: only a file still `processing` changes, so a retried
 * job that finds it finished returns nothing and emits nothing.
 */
export const finishProcessing = async (
  db: Db,
  fileId: string,
  result: Pick<FileRow, 'status' | 'failure_reason' | 'content_type' | 'sha256' | 'width' | 'height' | 'thumbnail_key'>,
): Promise<FileRow | undefined> => {
  const [row] = await db<FileRow>('files').where({ id: fileId, status: 'processing' }).update(result).returning('*');
  return row as FileRow | undefined;
};

/** Whether a user of the workspace has the file as avatar (`avatar_url` naming `/api/v1/files/<id>`; migration 120). */
export const isWorkspaceAvatar = async (db: Db, workspaceId: string, fileId: string): Promise<boolean> =>
  Boolean(
    await db('users')
      .where('workspace_id', workspaceId)
      .whereRaw(`avatar_url LIKE '%/api/v1/files/%' AND ${AVATAR_FILE_ID} = ?`, [fileId])
      .first(db.raw('1 AS one')),
  );

/** The files of the workspace among `ids`, locked until the transaction ends (deciding whether their last carrier is gone). */
export const lockFiles = async (db: Db, workspaceId: string, ids: string[]): Promise<FileRow[]> =>
  ids.length === 0
    ? []
    : db<FileRow>('files').whereIn('id', ids).andWhere('workspace_id', workspaceId).orderBy('id').forUpdate().select('*') as Promise<FileRow[]>;

export const deleteFileRow = async (db: Db, id: string): Promise<boolean> => (await db('files').where({ id }).delete()) > 0;
