import type { ChannelRow } from '../channels/channels.presenter.js';

/** A DM conversation: member_ids (the caller included) come from the sorted member_key. */
export const presentConversation = (row: ChannelRow) => ({
  id: row.id,
  kind: row.kind as 'dm' | 'group_dm',
  member_ids: (row.member_key ?? '').split(',').filter(Boolean),
  created_at: row.created_at,
});
