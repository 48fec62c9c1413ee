import { z } from 'zod';
import { Timestamp, named } from '../../../shared/http/responses.js';
import { readStateFields } from '../read-state/read-state.schemas.js';
import type { ChannelRow } from '../channels/channels.presenter.js';

export const ConversationSchema = named(
  'Conversation',
  z.strictObject({
    id: z.string(),
    kind: z.enum(['dm', 'group_dm']),
    member_ids: z.array(z.string()).describe('Every member, the caller included'),
    created_at: Timestamp,
    ...readStateFields,
  }),
);

/** A DM conversation: member_ids (the caller included) come from the sorted member_key. */
export const presentConversation = (row: ChannelRow): z.infer<typeof ConversationSchema> => ({
  id: row.id,
  kind: row.kind as 'dm' | 'group_dm',
  member_ids: (row.member_key ?? '').split(',').filter(Boolean),
  created_at: row.created_at,
});
