// Removing a file (level 3, contract §17): its row now, in the caller's
// transaction, and its stored objects by the worker once that commits
// (`file.remove_objects`, retried until storage answers), so a removal never
// leaves a row without its object or, for long, an object without its row.
import type { Db } from '../../../shared/db/knex.js';
import { recordJob } from '../../../shared/jobs.js';
import type { Runtime } from '../../../shared/runtime.js';
import type { FileRow } from './files.presenter.js';
import * as store from './files.store.js';

export async function removeStoredFile(rt: Runtime, trx: Db, row: FileRow): Promise<void> {
  if (!(await store.deleteFileRow(trx, row.id))) return;
  const keys = [row.storage_key, row.thumbnail_key].filter((k): k is string => k !== null);
  await recordJob(rt, trx, 'file.remove_objects', { fileId: row.id, keys });
}
