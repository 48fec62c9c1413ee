// Hiding existence in one place (style habit 3). Every route under
// /channels/{id} and /dms/{id} calls requireReadable first: a channel that does
// not exist, belongs to another workspace, is private to others or is of the
// other kind (a DM under /channels, a channel under /dms), or outside the
// conversations the caller's key is limited to (shared/scopes.ts) all answer
// the same 404 not_found, so a response never tells whether something is there.
import type { Actor } from '../../../shared/auth.js';
import type { Db } from '../../../shared/db/knex.js';
import { findWithMembership, readableIdsAmong, type Readable } from './channels.store.js';
import { reachesConversation } from '../../../shared/scopes.js';
import type { AccessCache } from '../../../shared/access-cache.js';
import { AppError, notFound } from '../../../shared/errors.js';
import type { ChannelRow } from './channels.presenter.js';

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
  if (!reachesConversation(actor, channelId)) throw hiddenError(kind);
  const cached = cache && cachedReadable(actor, channelId, kind, cache);
  if (cached) return cached;
  const mark = cache?.mark() ?? 0;
  const found = await findWithMembership(db, actor, channelId);
  // Only what the caller may read is cached: a hidden channel then takes the
  // same path (one query) and time as one that does not exist, every time.
  if (found && readableAs(found, kind)) cache?.setAccess(mark, channelId, actor.userId, found);
  return readable(found, kind);
}

/**
 * requireReadable answered from the access cache without a promise (the post
 * path awaits only on a miss): undefined when the cache does not know.
 */
export function cachedReadable(actor: Actor, channelId: string, kind: ChannelKind, cache: AccessCache): Readable | undefined {
  if (!reachesConversation(actor, channelId)) throw hiddenError(kind);
  const cached = cache.getAccess(channelId, actor.userId) as Readable | undefined;
  return cached && readable(cached, kind);
}

function readable(found: Readable | undefined, kind: ChannelKind): Readable {
  if (!found || !readableAs(found, kind)) throw hiddenError(kind);
  return found;
}

function readableAs(found: Readable, kind: ChannelKind): boolean {
  const isChannel = found.channel.kind === 'channel';
  if (isChannel !== (kind === 'channel')) return false;
  return (isChannel && !found.channel.is_private) || found.isMember;
}

/**
 * The channels and conversations a new key is to be limited to, each one the
 * caller may read with the key it calls with (a key made from a limited key
 * stays within its conversations): any other answers as hidden, 404.
 */
export async function requireReadableIds(db: Db, actor: Actor, ids: readonly string[]): Promise<void> {
  const outside = ids.find((id) => !reachesConversation(actor, id));
  if (outside !== undefined) throw notFound(`Conversation ${outside}`);
  const readable = new Set(await readableIdsAmong(db, { workspaceId: actor.workspaceId, userId: actor.userId, ids }));
  const hidden = ids.find((id) => !readable.has(id));
  if (hidden !== undefined) throw notFound(`Conversation ${hidden}`);
}

/**
 * An archived channel (level 3, contract §14) stays readable and refuses every
 * write: posts, edits, deletes, reactions, pins, members, hooks, streamed
 * appends. Every write path calls this after requireReadable, so the refusal
 * is one code in one place.
 */
export function refuseArchived(channel: Pick<ChannelRow, 'archived_at'>): void {
  if (channel.archived_at) throw new AppError('channel_archived', 'the channel is archived: it is read-only until an owner, an admin or its creator unarchives it');
}
