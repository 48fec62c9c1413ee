// A team's everyday chat (feature level 3, docs/team-chat.md): user groups,
// pins, archived channels and custom emoji. `TeamState` is what the store
// holds of them (fed by REST and by events, `applyTeamEvent`); `TeamActions`
// is what the views call. Framework-free, like the rest of lib/.
import { all, data, page, type Api } from './api.js';
import { setCustomEmoji } from './custom-emoji.js';
import type { Store } from './store.js';
import type { Channel, Message } from './types.js';
import type { components } from './api-schema.js';

export type UserGroup = components['schemas']['UserGroup'];
export type CustomEmoji = components['schemas']['CustomEmoji'];

/** The API's cap on a page of pins. */
const PINS_PAGE = 200;

export class TeamState {
  /** Every user group of the workspace (everyone may list them, for the composer's autocomplete). */
  groups = new Map<string, UserGroup>();
  /** Per conversation, its pinned messages newest pin first, once the pins panel has loaded them. */
  pins = new Map<string, Message[]>();
  /** The workspace's custom emoji, newest first (the rendering side is lib/custom-emoji.ts). */
  emoji: CustomEmoji[] = [];

  setPinned(store: Store, conversationId: string, message: Message) {
    const list = this.pins.get(conversationId);
    if (list) this.pins.set(conversationId, [message, ...list.filter((m) => m.id !== message.id)]);
    patchMessage(store, message.id, { pinned_at: message.pinned_at ?? new Date().toISOString(), pinned_by: message.pinned_by ?? null });
  }

  setUnpinned(store: Store, conversationId: string, messageId: string) {
    const list = this.pins.get(conversationId);
    if (list) this.pins.set(conversationId, list.filter((m) => m.id !== messageId));
    patchMessage(store, messageId, { pinned_at: null, pinned_by: null });
  }
}

/** A message the client holds, with some fields changed (a pin does not touch its place, its text or its unread state). */
function patchMessage(store: Store, id: string, patch: Partial<Message>) {
  const m = store.messages.get(id);
  if (m) store.messages.set(id, { ...m, ...patch });
}

/** This area's stream events; false for any other event. */
export function applyTeamEvent(store: Store, type: string, data: Record<string, unknown>): boolean {
  const team = store.team;
  switch (type) {
    case 'user_group.created':
    case 'user_group.updated': {
      const g = data.user_group as UserGroup;
      team.groups.set(g.id, g);
      return true;
    }
    case 'user_group.deleted':
      team.groups.delete(data.user_group_id as string);
      return true;
    case 'message.pinned':
      team.setPinned(store, data.channel_id as string, data.message as Message);
      return true;
    case 'message.unpinned':
      team.setUnpinned(store, data.channel_id as string, data.message_id as string);
      return true;
    default:
      return false;
  }
}

/** What is wrong with a group handle, as the API checks it (1 to 40 of a-z 0-9 . _ -, not a special mention), else null. */
export function groupHandleProblem(handle: string): string | null {
  if (!handle) return 'Give the group a handle.';
  if (!/^[a-z0-9._-]{1,40}$/.test(handle)) return 'A handle is 1 to 40 lower-case letters, digits, dots, dashes or underscores.';
  if (['here', 'channel', 'everyone'].includes(handle)) return `@${handle} is a mention of its own: pick another handle.`;
  return null;
}

/** What is wrong with a custom emoji's name, as the API checks it (1 to 64 of a-z 0-9 _ + -), else null. */
export function emojiNameProblem(name: string): string | null {
  if (!name) return 'Give the emoji a name.';
  return /^[a-z0-9_+-]{1,64}$/.test(name) ? null : 'A name is 1 to 64 lower-case letters, digits, dashes, pluses or underscores.';
}

/** Whether the channel is archived: read-only for everyone (the API answers 403 channel_archived to every write). */
export const isArchived = (c: Pick<Channel, 'archived_at'> | undefined | null) => Boolean(c?.archived_at);

export class TeamActions {
  constructor(
    private readonly api: Api,
    private readonly store: Store,
    private readonly isDm: (id: string) => boolean,
  ) {}

  /** Groups and custom emoji, once the lists say the server has them. */
  async load() {
    if (!this.store.features.teamChat) return;
    await Promise.all([this.loadGroups(), this.loadEmoji()]).catch(() => undefined);
  }

  // ---- user groups ---------------------------------------------------------

  async loadGroups() {
    const groups = await all((cursor) => page(this.api.GET('/api/v1/user-groups', { params: { query: { cursor, limit: 200 } } })));
    this.store.team.groups = new Map(groups.map((g) => [g.id, g]));
    this.store.changed();
  }

  async createGroup(body: { handle: string; name: string; description?: string; member_ids: string[] }) {
    return this.keepGroup(await data(this.api.POST('/api/v1/user-groups', { body })));
  }

  async updateGroup(id: string, patch: { handle?: string; name?: string; description?: string }) {
    return this.keepGroup(await data(this.api.PATCH('/api/v1/user-groups/{group_id}', { params: { path: { group_id: id } }, body: patch })));
  }

  async setGroupMembers(id: string, userIds: string[]) {
    return this.keepGroup(await data(this.api.PUT('/api/v1/user-groups/{group_id}/members', { params: { path: { group_id: id } }, body: { user_ids: userIds } })));
  }

  async deleteGroup(id: string) {
    await data(this.api.DELETE('/api/v1/user-groups/{group_id}', { params: { path: { group_id: id } } }));
    this.store.team.groups.delete(id);
    this.store.changed();
  }

  private keepGroup(g: UserGroup) {
    this.store.team.groups.set(g.id, g);
    this.store.changed();
    return g;
  }

  // ---- pins ----------------------------------------------------------------

  async loadPins(conversationId: string) {
    const path = { channel_id: conversationId, conversation_id: conversationId };
    const query = { limit: PINS_PAGE };
    // The first 200 pins of at most 100 a conversation may have: one page holds them all.
    const p = this.isDm(conversationId)
      ? await page(this.api.GET('/api/v1/dms/{conversation_id}/pins', { params: { path, query } }))
      : await page(this.api.GET('/api/v1/channels/{channel_id}/pins', { params: { path, query } }));
    this.store.team.pins.set(conversationId, p.data);
    this.store.changed();
  }

  async pin(m: Message) {
    const path = { channel_id: m.channel_id, conversation_id: m.channel_id };
    const body = { message_id: m.id };
    const pinned = this.isDm(m.channel_id)
      ? await data(this.api.POST('/api/v1/dms/{conversation_id}/pins', { params: { path }, body }))
      : await data(this.api.POST('/api/v1/channels/{channel_id}/pins', { params: { path }, body }));
    this.store.team.setPinned(this.store, m.channel_id, pinned);
    this.store.changed();
  }

  async unpin(m: Pick<Message, 'id' | 'channel_id'>) {
    const path = { channel_id: m.channel_id, conversation_id: m.channel_id, message_id: m.id };
    await data(
      this.isDm(m.channel_id)
        ? this.api.DELETE('/api/v1/dms/{conversation_id}/pins/{message_id}', { params: { path } })
        : this.api.DELETE('/api/v1/channels/{channel_id}/pins/{message_id}', { params: { path } }),
    );
    this.store.team.setUnpinned(this.store, m.channel_id, m.id);
    this.store.changed();
  }

  // ---- channels: browse, archive -------------------------------------------

  /** Every channel the caller may see, archived ones too, with member counts and whether the caller is in it. */
  browseChannels() {
    return all((cursor) => page(this.api.GET('/api/v1/channels', { params: { query: { cursor, limit: 200, include_archived: 'true' } } })));
  }

  /** A channel the lists left out (archived): asked for by id and kept, so that it opens, read-only. */
  async findChannel(channelId: string) {
    if (!this.store.features.teamChat) return;
    const c = await data(this.api.GET('/api/v1/channels/{channel_id}', { params: { path: { channel_id: channelId } } })).catch(() => null);
    if (!c) return;
    this.store.upsertChannel(c);
    if (c.is_member) this.store.memberOf.add(c.id);
    this.store.changed();
  }

  async setArchived(channelId: string, archived: boolean) {
    const path = { channel_id: channelId };
    const c = archived
      ? await data(this.api.POST('/api/v1/channels/{channel_id}/archive', { params: { path } }))
      : await data(this.api.POST('/api/v1/channels/{channel_id}/unarchive', { params: { path } }));
    this.store.upsertChannel(c);
    this.store.changed();
    return c;
  }

  /** Who may archive a channel: the workspace's owners and admins, and the channel's creator. */
  mayArchive(c: Pick<Channel, 'created_by'>) {
    const me = this.store.me;
    return Boolean(me && (me.role === 'owner' || me.role === 'admin' || c.created_by === me.id));
  }

  // ---- custom emoji --------------------------------------------------------

  async loadEmoji() {
    const list = await all((cursor) => page(this.api.GET('/api/v1/emoji', { params: { query: { cursor, limit: 100 } } })));
    this.store.team.emoji = list;
    setCustomEmoji(list);
    this.store.changed();
    return list;
  }

  /** Uploads an image under a name; the worker stores it (its `url` stays null until then). */
  async addEmoji(name: string, image: File) {
    const form = new FormData();
    form.append('name', name);
    form.append('image', image, image.name);
    // openapi-fetch sends a FormData body as it is (the browser sets the multipart boundary).
    const created = await data(this.api.POST('/api/v1/emoji', { body: form as never, bodySerializer: (b: unknown) => b as FormData }));
    await this.loadEmoji();
    return created;
  }

  async removeEmoji(name: string) {
    await data(this.api.DELETE('/api/v1/emoji/{name}', { params: { path: { name } } }));
    await this.loadEmoji();
  }

  /** Who may delete a custom emoji: whoever added it, admins and owners. */
  mayRemoveEmoji(e: CustomEmoji) {
    const me = this.store.me;
    return Boolean(me && (me.role === 'owner' || me.role === 'admin' || e.created_by === me.id));
  }
}
