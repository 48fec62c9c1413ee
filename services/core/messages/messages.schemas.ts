import { z } from 'zod';
import { fromLevel, type LevelSpan } from '../../../shared/feature-level.js';
import { PageQuery } from '../../../shared/http/envelope.js';
import { jsonDepth } from '../../../shared/http/input.js';
import { isUuid } from '../../../shared/ids.js';
import { charCount } from '../channels/channels.schemas.js';

export const MAX_CONTENT = 40_000;
export const MAX_METADATA_BYTES = 16_384;
/** Levels of objects/arrays in `metadata.data` (the data object is level 1), as content_json has its own (shared/blocks). */
export const MAX_METADATA_DEPTH = 20;

/** 1 to 40,000 characters (code points), not only white space. */
export const Content = z
  .string({ error: 'is required (a string)' })
  .refine((s) => s.trim().length > 0, 'must not be empty or only white space')
  .refine((s) => charCount(s) <= MAX_CONTENT, `must be at most ${MAX_CONTENT} characters`);

/** `{type, data}`, at most 16 KB as JSON, `data` at most 20 levels deep (checked before the size, which recurses). */
export const Metadata = z
  .strictObject({
    type: z.string({ error: 'is required (a string)' }).min(1, 'must be 1 to 100 characters').max(100, 'must be 1 to 100 characters'),
    data: z
      .record(z.string(), z.unknown(), { error: 'is required (an object)' })
      .refine((d) => jsonDepth(d, MAX_METADATA_DEPTH) <= MAX_METADATA_DEPTH, {
        message: `must be nested at most ${MAX_METADATA_DEPTH} levels deep`,
        abort: true,
      }),
  }, { error: 'must be an object {type, data}' })
  .refine((m) => Buffer.byteLength(JSON.stringify(m)) <= MAX_METADATA_BYTES, `must be at most ${MAX_METADATA_BYTES} bytes as JSON`);

/** Checked by the shared block validator (shared/blocks), which names the node path. */
export const ContentJson = z.unknown();

const MessageId = (what: string) => z.string().refine(isUuid, `must be ${what} (a uuid)`);

/** An ISO 8601 time with its offset (`2026-12-01T09:00:00Z`, `…+02:00`): scheduled messages, reminders. */
export const IsoTime = z.iso.datetime({ offset: true, error: 'must be an ISO 8601 time with its offset, such as 2026-12-01T09:00:00Z' });

/** A post with `send_at` is scheduled instead: the field, and the 202 that answers it (contract §14). */
export const SCHEDULED_POSTS: LevelSpan = { since: 3 };

export const PostMessageBody = z.strictObject({
  content: Content,
  content_json: ContentJson.optional(),
  metadata: Metadata.nullable().optional(),
  thread_id: MessageId('a root message id').nullable().optional(),
  streaming: fromLevel(
    { since: 3 },
    z.boolean({ error: 'must be true or false' }).optional().describe('True: a streamed reply, grown with .../append and ended with .../finish (feature level 3)'),
  ),
  send_at: fromLevel(
    SCHEDULED_POSTS,
    IsoTime.optional()
      .describe('Post it then instead (1 minute to 120 days ahead): answers 202 with the ScheduledMessage (feature level 3)'),
  ),
});
export type PostMessageInput = z.infer<typeof PostMessageBody>;

export const AppendBody = z.strictObject({
  content: z
    .string({ error: 'is required (a string)' })
    .min(1, 'must not be empty')
    .refine((s) => charCount(s) <= MAX_CONTENT, `must be at most ${MAX_CONTENT} characters`),
});
export type AppendInput = z.infer<typeof AppendBody>;

export const FinishBody = z.strictObject({
  content_json: ContentJson.optional(),
  metadata: Metadata.nullable().optional(),
});
export type FinishInput = z.infer<typeof FinishBody>;

export const UpdateMessageBody = z.strictObject({
  content: Content.optional(),
  content_json: ContentJson.optional(),
  metadata: Metadata.nullable().optional(),
  unfurls: fromLevel(
    { since: 3 },
    z.array(z.unknown()).max(0, 'takes only [], which removes the previews').optional().describe('`[]` removes the link previews (the author; contract §14): no other value is taken'),
  ),
});
export type UpdateMessageInput = z.infer<typeof UpdateMessageBody>;

/** History pages that go both ways: `around`, `after` and `prev_cursor` (docs/decisions.md, "Messages"). */
export const BOTH_WAYS: LevelSpan = { since: 3 };

export const ListMessagesQuery = PageQuery.extend({
  thread_id: MessageId('a root message id').optional(),
  around: fromLevel(
    BOTH_WAYS,
    MessageId('a message id')
      .optional()
      .describe('A page holding this message (of the list: top-level, or a reply of thread_id), about half the limit older and the rest newer; not with cursor or after (feature level 3)'),
  ),
  after: fromLevel(
    BOTH_WAYS,
    z.string().min(1).max(200).optional().describe('A `prev_cursor`: the page of messages newer than it, still newest first (feature level 3)'),
  ),
});
export type ListMessagesInput = z.infer<typeof ListMessagesQuery>;

/** A name such as `thumbsup` or `+1`, or one Unicode emoji (with its modifiers and joiners). */
const EMOJI_NAME = /^[a-z0-9_+-]{1,64}$/;
const EMOJI_CHAR = /^(?=[\s\S]*[\p{Extended_Pictographic}\p{Regional_Indicator}\u20E3])[\p{Emoji}\p{Emoji_Component}\u200D\uFE0F\u20E3]{1,32}$/u;
export const isEmoji = (s: string) => EMOJI_NAME.test(s) || EMOJI_CHAR.test(s);

export const Emoji = z
  .string({ error: 'is required (an emoji name such as "thumbsup" or a Unicode emoji)' })
  .refine(isEmoji, 'must be an emoji name (a-z, 0-9, _ + -, at most 64) or a Unicode emoji');

export const ReactionBody = z.strictObject({ emoji: Emoji });
