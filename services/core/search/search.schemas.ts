import { z } from 'zod';
import { PageQuery } from '../../../shared/http/envelope.js';
import { isUuid } from '../../../shared/ids.js';
import { IsoTime } from '../messages/messages.schemas.js';
import type { LevelSpan } from '../../../shared/feature-level.js';

/** Where search exists: its route, and the posts that write their words (migration 090). */
export const SEARCH: LevelSpan = { since: 3 };

const Id = (what: string) => z.string().refine(isUuid, `must be ${what} (a uuid)`);

/** `GET /search/messages` (level 3): web-search syntax (words, "phrases", -excluded). */
export const SearchQuery = PageQuery.extend({
  q: z.string().max(1000, 'must be at most 1000 characters').optional().describe('The words; may be left out when a filter is given'),
  channel_id: Id('a channel or conversation id').optional(),
  author_id: Id('a user id').optional(),
  // The web app's `before:`, `after:` and `has:file` filters; the times are
  // exclusive, so a day's search is `after` its eve's end and `before` the next day.
  before: IsoTime.optional().describe('Only messages posted before this time'),
  after: IsoTime.optional().describe('Only messages posted after this time'),
  has: z.enum(['file'], { error: 'must be file' }).optional().describe('file: only messages carrying a file'),
}).superRefine((query, ctx) => {
  // Words, or at least one filter ("from:alice" alone lists her messages, newest first).
  const filtered = query.channel_id || query.author_id || query.before || query.after || query.has;
  if (!query.q?.trim() && !filtered) ctx.addIssue({ code: 'custom', path: ['q'], message: query.q === undefined ? 'is required: what to search for' : 'must not be empty' });
});
export type SearchInput = z.infer<typeof SearchQuery>;
