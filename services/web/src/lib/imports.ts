// Imports of a Slack export by the owner (level 3, docs/migrating-from-slack.md):
// the ZIP goes up as multipart (field `file`) with upload progress; the worker
// runs it, and GET /imports/{id} gives its counts as they grow, then its report.
import { data, uploadTo } from './api.js';
import type { components } from './api-schema.js';
import type { AxidClient } from './client.js';
import type { KeyValueStorage } from './store.js';

export type Import = components['schemas']['Import'];

/** The last import started from this browser, shown again when the screen is opened later (there is no list of imports). */
const LAST = 'axid.lastImport';

export const lastImportId = (storage: KeyValueStorage) => storage.getItem(LAST);

export async function startSlackImport(client: AxidClient, file: File, onProgress: (fraction: number) => void): Promise<Import> {
  const started = await uploadTo<Import>('/api/v1/imports/slack', file, client.key!, onProgress);
  client.storage.setItem(LAST, started.id);
  return started;
}

export const getImport = (client: AxidClient, id: string) => data(client.api.GET('/api/v1/imports/{import_id}', { params: { path: { import_id: id } } }));

export const isDone = (i: Import) => i.status === 'finished' || i.status === 'failed';

/** The counts' names, in the report's order. */
export const COUNT_LABELS: [keyof Import['counts'], string][] = [
  ['users', 'People'],
  ['channels', 'Channels'],
  ['dms', 'Direct messages'],
  ['messages', 'Messages'],
  ['replies', 'Thread replies'],
  ['reactions', 'Reactions'],
  ['pins', 'Pins'],
  ['files', 'Files'],
];
