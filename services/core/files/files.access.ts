// Who reads a file. Level 2 (contract §4): any member of its workspace. Level 3
// (§17): its uploader, and whoever can read, now, a conversation where a
// message carrying it was posted (requireReadable, the one access check);
// a file posted nowhere only its uploader. A file that is someone's avatar
// (`avatar_url` naming it, as the web app sets it) stays readable by the
// workspace, as a profile is. Anything else answers as a missing file.
import type { Actor } from '../../../shared/auth.js';
import { AppError } from '../../../shared/errors.js';
import type { Runtime } from '../../../shared/runtime.js';
import { requireReadable } from '../channels/channels.access.js';
import { channelsCarryingFile } from '../messages/messages.store.js';
import type { FileRow } from './files.presenter.js';
import * as store from './files.store.js';

/** Who asks: a caller, or a message's author (a hook's creator) carrying the file. */
export type FileReader = Pick<Actor, 'userId' | 'workspaceId'> & Partial<Actor>;

/** The file if `reader` may read it; undefined when it does not exist or is hidden from them. */
export async function readableFile(rt: Runtime, reader: FileReader, fileId: string): Promise<FileRow | undefined> {
  const row = await store.findFileInWorkspace(rt.db, reader.workspaceId, fileId);
  if (!row || !rt.presenters.filesFollowConversations || row.uploader_id === reader.userId) return row;
  if (await readsAConversationCarrying(rt, reader, row.id)) return row;
  if (await store.isWorkspaceAvatar(rt.db, reader.workspaceId, row.id)) return row;
  return undefined;
}

/** Public channels first: most files are posted where everyone reads, and one check answers. */
async function readsAConversationCarrying(rt: Runtime, reader: FileReader, fileId: string): Promise<boolean> {
  const channels = await channelsCarryingFile(rt.db, reader.workspaceId, fileId);
  for (const c of channels) {
    const readable = await requireReadable(rt.db, reader as Actor, c.channel_id, c.kind === 'channel' ? 'channel' : 'conversation', rt.access).then(
      () => true,
      (err: unknown) => {
        if (err instanceof AppError && err.code === 'not_found') return false;
        throw err;
      },
    );
    if (readable) return true;
  }
  return false;
}
