// Read state's fields and body (feature level 3, contract §12), apart from
// read-state.ts so the Channel and Conversation schemas can use them.
import { z } from 'zod';
import { fromLevel, type LevelSpan } from '../../../shared/feature-level.js';
import { isUuid } from '../../../shared/ids.js';

export const READ_STATE: LevelSpan = { since: 3 };
/** Counts stop here: "99+" is all a badge needs, and the query stays bounded. */
export const COUNT_CAP = 1000;

/** The fields Channel and Conversation objects gain at level 3. */
export const readStateFields = {
  last_read_message_id: fromLevel(READ_STATE, z.string().nullable().optional().describe('The last message the caller has read (feature level 3); null before any')),
  unread_count: fromLevel(READ_STATE, z.number().int().optional().describe(`Top-level messages by others after it, counted up to ${COUNT_CAP} (feature level 3)`)),
  mention_count: fromLevel(READ_STATE, z.number().int().optional().describe('Of those, the ones that mention the caller (feature level 3)')),
};

export const ReadBody = z.strictObject({
  message_id: z.string().refine(isUuid, 'must be a message id (a uuid)'),
});

