// Hiding existence in one place (style habit 3). Every route under
// /channels/{id} and /dms/{id} calls requireReadable first: a channel that does
// not exist, belongs to another workspace, is private to others or is of the
// other kind (a DM under /channels, a channel under /dms) all answer the same
// 404 not_found, so a response never tells whether something is there.
import type { Actor } from '../../../shared/auth.js';
import type { Db } from '../../../shared/db/knex.js';
import { findWithMembership, type Readable } from './channels.store.js';
import type { AccessCache } from '../../../shared/access-cache.js';
import { notFound } from '../../../shared/errors.js';

export type ChannelKind = 'channel' | 'conversation';

export const hiddenError = (kind: ChannelKind) => notFound(kind === 'channel' ? 'Channel' : 'Conversation');

/**
 * The channel (kind `channel`) or conversation (kind `dm`/`group_dm`) if the
 * caller may read it: public channels of the caller's workspace, private ones
 * and conversations only for their members. Anything else: the same 404.
 */
export async function requireReadable(
  db: Db,
  actor: Actor,
  channelId: string,
  kind: ChannelKind = 'channel',
  cache?: AccessCache,
): Promise<Readable> {
  let found = cache?.getAccess(channelId, actor.userId) as Readable | undefined;
  if (!found) {
    const mark = cache?.mark() ?? 0;
    found = await findWithMembership(db, actor, channelId);
    if (found) cache?.setAccess(mark, channelId, actor.userId, found);
  }
  if (!found) throw hiddenError(kind);
  const isChannel = found.channel.kind === 'channel';
  if (isChannel !== (kind === 'channel')) throw hiddenError(kind);
  if ((!isChannel || found.channel.is_private) && !found.isMember) throw hiddenError(kind);
  return found;
}
