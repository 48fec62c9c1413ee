import type { Db } from '../../../shared/db/knex.js';
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
