// Hiding existence in one place (style habit 3). Every route under
// /channels/{id} and /dms/{id} calls requireReadable first: a channel that does
// not exist, belongs to another workspace, is private to others or is of the
// other kind (a DM under /channels, a channel under /dms) all answer the same
// 404 not_found, so a response never tells whether something is there.
import type { Actor } from '../../../shared/auth.js';
import type { Db } from '../../../shared/db/knex.js';
import type { AccessCache } from '../../../shared/access-cache.js';
import { notFound } from '../../../shared/errors.js';
import { isUuid } from '../../../shared/ids.js';
import type { ChannelRow } from './channels.presenter.js';

export type ChannelKind = 'channel' | 'conversation';

export interface Readable {
  channel: ChannelRow;
  isMember: boolean;
}

export const hiddenError = (kind: ChannelKind) => notFound(kind === 'channel' ? 'Channel' : 'Conversation');

/** One query: the channel and whether the caller is a member of it. */
export async function findWithMembership(db: Db, actor: Actor, channelId: string): Promise<Readable | undefined> {
  if (!isUuid(channelId)) return undefined;
  const row = await db('channels as c')
    .leftJoin('channel_members as cm', function () {
      this.on('cm.channel_id', 'c.id').andOn('cm.user_id', db.raw('?', [actor.userId]));
    })
    .where({ 'c.id': channelId, 'c.workspace_id': actor.workspaceId })
    .first('c.*', db.raw('(cm.user_id IS NOT NULL) AS is_member'));
  if (!row) return undefined;
  const { is_member, ...channel } = row;
  return { channel: channel as ChannelRow, isMember: Boolean(is_member) };
}

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
