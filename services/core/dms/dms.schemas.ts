import { z } from 'zod';
import { PageQuery } from '../../../shared/http/envelope.js';
import { isUuid } from '../../../shared/ids.js';

export const MAX_OTHER_MEMBERS = 8;

/** 1 to 8 other users; the caller's own id, if listed, is ignored; duplicates count once. */
export const OpenConversationBody = z.strictObject({
  user_ids: z
    .array(z.string().refine(isUuid, 'must be a user id (a uuid)'), { error: 'is required (an array of user ids)' })
    .min(1, 'must list 1 to 8 other users')
    .max(50, 'must list 1 to 8 other users'),
});

export const ConversationParams = z.object({ conversation_id: z.string() });
export const ListQuery = PageQuery;
