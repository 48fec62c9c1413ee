import { requireAnyConversation } from '../../../shared/scopes.js';
import type { Runtime } from '../../../shared/runtime.js';
import type { Actor } from '../../../shared/auth.js';
import type { Knex } from '../../../shared/db/knex.js';
import { AppError, forbidden, invalid, isUniqueViolation, notFound } from '../../../shared/errors.js';
import { recordEvents, type AxidEvent } from '../../../shared/events.js';
import { isUuid } from '../../../shared/ids.js';
import { decodeCursor, pageOf, type PageQuery } from '../../../shared/http/envelope.js';
import { presentUser } from '../users/users.presenter.js';
import { findActiveUser } from '../users/users.store.js';
import { withReadState } from '../read-state/read-state.js';
import { refuseArchived, requireReadable } from './channels.access.js';
import { canAddMember, canArchive, canRemoveMember, canSetDefault, canSetRetention, canUpdateChannel } from './channels.policy.js';
import { presentMember, type ChannelRow } from './channels.presenter.js';
import type { CreateChannelInput, ListChannelsInput, UpdateChannelInput } from './channels.schemas.js';
import * as store from './channels.store.js';
import { recordAudit } from '../audit/audit.store.js';

// Public names are unique (an index); a private channel's name is checked only
// against the channels the caller can see, so this never tells of one they cannot.
const nameTaken = (name: string) => new AppError('name_taken', `a channel named "${name}" already exists in this workspace`);

/** Public channels are announced to the workspace; private ones only to their members. */
const channelAddress = (channel: ChannelRow): AxidEvent['to'] =>
  channel.is_private
    ? { scope: 'channel', workspace_id: channel.workspace_id, channel_id: channel.id }
    : { scope: 'workspace', workspace_id: channel.workspace_id };

export async function listChannels(rt: Runtime, actor: Actor, q: ListChannelsInput) {
  const rows = await rt.reads.read(actor, (db) =>
    store.listVisibleChannels(db, {
      workspaceId: actor.workspaceId,
      userId: actor.userId,
      after: decodeCursor(q.cursor),
      limit: q.limit,
      conversationIds: actor.conversationIds,
      membership: rt.presenters.archivedChannels,
      includeArchived: q.include_archived ?? false,
    }),
  );
  const page = pageOf(rows, q.limit, rt.presenters.channel);
  return { ...page, items: await withReadState(rt, actor, page.items) };
}

/** A channel as its viewer reads it: at level 3 with its member count and whether they are in it. */
async function presentFor(rt: Runtime, db: Knex | Knex.Transaction, channel: ChannelRow, isMember: boolean) {
  if (!rt.presenters.archivedChannels) return rt.presenters.channel(channel);
  return rt.presenters.channel({ ...channel, member_count: await store.countMembers(db, channel.id), is_member: isMember });
}

export async function getChannel(rt: Runtime, actor: Actor, channelId: string) {
  const { channel, isMember } = await requireReadable(rt.db, actor, channelId);
  const [shown] = await withReadState(rt, actor, [await presentFor(rt, rt.db, channel, isMember)]);
  return shown!;
}

/**
 * Archives or unarchives a channel (level 3, contract §14): owners, admins and
 * its creator; a default channel is never archived (409). Doing what is done
 * already changes nothing and answers the channel. The change, its audit entry
 * and channel.updated commit together; the channel's row is locked, so a pin or
 * another archive in flight sees the outcome.
 */
export async function setArchived(rt: Runtime, actor: Actor, channelId: string, archived: boolean) {
  const { channel, isMember } = await requireReadable(rt.db, actor, channelId);
  if (!canArchive(actor, channel)) throw forbidden('only workspace owners, admins and the channel\'s creator archive or unarchive it');
  return rt.db.transaction(async (trx) => {
    const locked = (await store.lockChannel(trx, channel.id)) as ChannelRow;
    if (archived && locked.is_default) throw new AppError('conflict', 'a default channel cannot be archived: make it not default first (PATCH is_default false)');
    if ((locked.archived_at !== null) === archived) return presentFor(rt, trx, { ...locked, parent_hidden: channel.parent_hidden }, isMember);
    const updated = await store.setArchived(trx, channel.id, archived);
    await recordAudit(trx, { workspaceId: actor.workspaceId, action: archived ? 'channel.archived' : 'channel.unarchived', actor, target: { type: 'channel', id: channel.id }, details: { name: updated.name } });
    const parentPrivate = await store.parentIsPrivate(trx, updated);
    await recordEvents(rt, trx, [{ type: 'channel.updated', to: channelAddress(updated), data: { channel: rt.presenters.channel({ ...updated, parent_hidden: parentPrivate }) } }]);
    return presentFor(rt, trx, { ...updated, parent_hidden: channel.parent_hidden }, isMember);
  });
}

export async function createChannel(rt: Runtime, actor: Actor, input: CreateChannelInput) {
  const db = rt.db;
  requireAnyConversation(actor, 'making a channel');
  if (input.is_default && !canSetDefault(actor)) throw forbidden('only workspace owners and admins create default channels');
  if (input.parent_channel_id) {
    // An unknown or hidden parent: 404 like any hidden channel; a sub-channel as parent: depth 1 exceeded.
    const { channel: parent } = await requireReadable(db, actor, input.parent_channel_id);
    if (parent.parent_channel_id) {
      throw invalid('parent_channel_id: the parent is itself a sub-channel; sub-channels nest at most one level deep');
    }
  }
  try {
    return await db.transaction(async (trx) => {
      if (await store.visibleChannelNamed(trx, actor.workspaceId, actor.userId, input.name)) throw nameTaken(input.name);
      const channel = await store.insertChannel(trx, {
        workspace_id: actor.workspaceId,
        name: input.name,
        description: input.description ?? '',
        is_private: input.is_private ?? false,
        is_default: input.is_default ?? false,
        parent_channel_id: input.parent_channel_id ?? null,
        team_id: input.team_id ?? null,
        created_by: actor.userId,
      });
      await store.insertMember(trx, { channel_id: channel.id, user_id: actor.userId, workspace_id: actor.workspaceId });
      const parentPrivate = await store.parentIsPrivate(trx, channel);
      await recordEvents(rt, trx, [{ type: 'channel.created', to: channelAddress(channel), data: { channel: rt.presenters.channel({ ...channel, parent_hidden: parentPrivate }) } }]);
      return presentFor(rt, trx, channel, true); // the creator reads the parent
    });
  } catch (err) {
    if (isUniqueViolation(err, 'channels_workspace_name')) throw nameTaken(input.name);
    throw err;
  }
}

export async function updateChannel(rt: Runtime, actor: Actor, channelId: string, patch: UpdateChannelInput) {
  const db = rt.db;
  const { channel, isMember } = await requireReadable(db, actor, channelId);
  if (!canUpdateChannel(actor, isMember)) throw forbidden('only members of the channel, admins and owners update it: join it first');
  if (patch.is_default !== undefined && !canSetDefault(actor)) throw forbidden('only workspace owners and admins change is_default');
  if (patch.retention_days !== undefined && !canSetRetention(actor)) throw forbidden('only workspace owners and admins change retention_days');
  refuseArchived(channel);
  if (Object.keys(patch).length === 0) return presentFor(rt, db, channel, isMember);
  try {
    return await db.transaction(async (trx) => {
      if (patch.name !== undefined && (await store.visibleChannelNamed(trx, actor.workspaceId, actor.userId, patch.name, channel.id))) throw nameTaken(patch.name);
      const updated = await store.updateChannel(trx, channel.id, patch.retention_days !== undefined ? { ...patch, retention_set: true } : patch);
      if (patch.retention_days !== undefined && (!channel.retention_set || channel.retention_days !== patch.retention_days)) await recordAudit(trx, { workspaceId: actor.workspaceId, action: 'retention.changed', actor, target: { type: 'channel', id: channel.id }, details: { from: channel.retention_set ? channel.retention_days : 'workspace', to: patch.retention_days } });
      const parentPrivate = await store.parentIsPrivate(trx, updated);
      await recordEvents(rt, trx, [{ type: 'channel.updated', to: channelAddress(updated), data: { channel: rt.presenters.channel({ ...updated, parent_hidden: parentPrivate }) } }]);
      return presentFor(rt, trx, { ...updated, parent_hidden: channel.parent_hidden }, isMember);
    });
  } catch (err) {
    if (isUniqueViolation(err, 'channels_workspace_name')) throw nameTaken(patch.name ?? '');
    throw err;
  }
}

export async function listMembers(rt: Runtime, actor: Actor, channelId: string, q: PageQuery) {
  // Who may read is decided on the primary (and cached); the page may come from a replica.
  const { channel } = await requireReadable(rt.db, actor, channelId, 'channel', rt.access);
  const rows = await rt.reads.read(actor, (db) => store.listMembers(db, { channelId: channel.id, after: decodeCursor(q.cursor), limit: q.limit }));
  return pageOf(rows, q.limit, (r) => presentMember(r.member, r.user));
}

/** Adds a member, checking in this order (docs/decisions.md, "Channels and members"). */
export async function addMember(rt: Runtime, actor: Actor, channelId: string, userId: string) {
  const db = rt.db;
  // A non-member of a private channel gets the same 404 as for a missing one.
  const { channel, isMember } = await requireReadable(db, actor, channelId);
  // Only members add others to a private channel (a non-member never gets past the 404 above).
  if (!canAddMember(channel, isMember)) throw forbidden('only members of a private channel add others to it');
  refuseArchived(channel);
  return db.transaction(async (trx) => {
    // The target must be an active member of this workspace.
    const user = await findActiveUser(trx, actor.workspaceId, userId);
    if (!user) throw notFound('User');
    const member = await store.insertMember(trx, { channel_id: channel.id, user_id: user.id, workspace_id: actor.workspaceId });
    // Already a member: 409 already_member.
    if (!member) throw new AppError('already_member', 'the user is already a member of this channel');
    await recordEvents(rt, trx, [
      {
        type: 'channel.member_added',
        to: { scope: 'channel', workspace_id: actor.workspaceId, channel_id: channel.id, user_ids: [user.id] },
        data: { channel_id: channel.id, user_id: user.id, user: presentUser(user) },
      },
    ]);
    // 201 with the ChannelMember record.
    return presentMember(member, user);
  });
}

export async function removeMember(rt: Runtime, actor: Actor, channelId: string, userId: string) {
  const db = rt.db;
  const { channel, isMember } = await requireReadable(db, actor, channelId);
  if (!canRemoveMember(actor, isMember, userId)) {
    throw forbidden('only members of the channel, workspace admins and owners remove someone else from a channel');
  }
  refuseArchived(channel);
  await db.transaction(async (trx) => {
    const removed = isUuid(userId) && (await store.deleteMember(trx, channel.id, userId));
    if (!removed) throw notFound('Channel member');
    await recordEvents(rt, trx, [
      {
        type: 'channel.member_removed',
        to: { scope: 'channel', workspace_id: actor.workspaceId, channel_id: channel.id, user_ids: [userId] },
        data: { channel_id: channel.id, user_id: userId },
      },
    ]);
  });
}
