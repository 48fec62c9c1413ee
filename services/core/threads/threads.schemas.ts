// Followed threads (level 3): what GET /threads answers and
// POST /threads/{message_id}/read takes.
import { z } from 'zod';
import type { LevelSpan } from '../../../shared/feature-level.js';
import { named } from '../../../shared/http/responses.js';
import { MessageSchema } from '../messages/messages.presenter.js';
import { COUNT_CAP } from '../read-state/read-state.schemas.js';

export const FOLLOWED_THREADS: LevelSpan = { since: 3 };

export const FollowedThreadSchema = named(
  'FollowedThread',
  z.strictObject({
    root: MessageSchema.describe("The thread's root message; its `thread` holds the reply count and the last reply's time"),
    unread_replies: z.number().int().describe(`Replies by others after the caller's read mark or their own last reply, counted up to ${COUNT_CAP}`),
    last_read_message_id: z.string().nullable().describe('The last reply the caller marked read in this thread; null before any'),
    last_reply_id: z.string().describe("The thread's newest reply (opening the thread there opens it at its end)"),
  }),
);
