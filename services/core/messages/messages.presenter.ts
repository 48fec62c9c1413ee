import { z } from 'zod';
import { fieldsAbsentAt, fromLevel, type FeatureLevel, type LevelSpan } from '../../../shared/feature-level.js';
import { Timestamp, named } from '../../../shared/http/responses.js';

export interface MessageRow {
  id: string;
  seq: number;
  workspace_id: string;
  channel_id: string;
  author_id: string | null;
  thread_id: string | null;
  content: string;
  /** Checked by the block validator before it is stored. */
  content_json: ContentDocument | null;
  metadata: { type: string; data: Record<string, unknown> } | null;
  card_origin: string | null;
  mentioned_user_ids: string[];
  display: MessageDisplay | null;
  webhook_id: string | null;
  created_at: Date;
  edited_at: Date | null;
  /** A streamed agent reply still being written (level 3). */
  streaming: boolean;
  /** `here`, `channel` or user group ids its content mentions (level 3; absent on rows made before migration 190 was read). */
  mentioned_group_ids?: string[];
  /** When and by whom the message was pinned in its conversation (level 3, migration 195); null: not pinned. */
  pinned_at?: Date | null;
  pinned_by?: string | null;
  /** Link previews the worker fetched (level 3, services/core/unfurls); null: none yet. */
  unfurls?: Unfurl[] | null;
  /** From the LEFT JOIN on threads (roots only). */
  reply_count?: number | null;
  last_reply_at?: Date | null;
}

export const ReactionSummarySchema = named(
  'ReactionSummary',
  z.strictObject({ emoji: z.string(), count: z.number().int(), user_ids: z.array(z.string()) }),
);
export type ReactionSummary = z.infer<typeof ReactionSummarySchema>;

/** A node of `content_json`, as the block validator admits it (shared/blocks/validate.ts). */
export interface ContentNode {
  type: string;
  content?: ContentNode[];
  text?: string;
  attrs?: Record<string, unknown>;
  marks?: { type: string; attrs?: Record<string, unknown> }[];
}
const Attrs = z.record(z.string(), z.unknown());
export const ContentNodeSchema: z.ZodType<ContentNode> = named(
  'ContentNode',
  z.strictObject({
    type: z.string().describe('paragraph, text, heading, ..., mention, or block_<name>'),
    get content() {
      return z.array(ContentNodeSchema).optional();
    },
    text: z.string().optional(),
    attrs: Attrs.optional(),
    marks: z.array(z.strictObject({ type: z.string(), attrs: Attrs.optional() })).optional(),
  }),
);

/** `content_json`: the structured form of a message, `{type: "doc", content: [...]}`. */
export const ContentDocumentSchema = named('ContentDocument', z.strictObject({ type: z.literal('doc'), content: z.array(ContentNodeSchema) }));
export type ContentDocument = z.infer<typeof ContentDocumentSchema>;

/** How a webhook post asks to be shown (services/core/webhooks/webhooks.compat.ts reads it from the sender). */
export const MessageDisplaySchema = named(
  'MessageDisplay',
  z.strictObject({ username: z.string().optional(), icon_emoji: z.string().optional(), icon_url: z.string().optional() }),
);
export type MessageDisplay = z.infer<typeof MessageDisplaySchema>;

/** On a root message with replies. */
export const ThreadSchema = named('Thread', z.strictObject({ reply_count: z.number().int(), last_reply_at: Timestamp.nullable() }));

/** A link preview (contract §14): what the page says of itself; image_url is Axid's own copy of its image. */
export const UnfurlSchema = named(
  'Unfurl',
  z.strictObject({
    url: z.string(),
    title: z.string().nullable(),
    description: z.string().nullable(),
    site_name: z.string().nullable(),
    image_url: z.string().nullable().describe('The preview image as stored by Axid (never the page\'s own address)'),
  }),
);
export type Unfurl = z.infer<typeof UnfurlSchema>;

/** `unfurls` exists from level 3 (link previews). */
export const MESSAGE_UNFURLS: LevelSpan = { since: 3 };

/** `streaming` exists from level 3 (streamed agent replies). */
export const MESSAGE_STREAMING: LevelSpan = { since: 3 };
/** `mentioned_group_ids` exists from level 3 (group mentions, contract §14). */
export const GROUP_MENTIONS: LevelSpan = { since: 3 };
/** Pins exist from level 3 (contract §14). */
export const MESSAGE_PINS: LevelSpan = { since: 3 };

export const MessageSchema = named(
  'Message',
  z.strictObject({
    id: z.string(),
    channel_id: z.string(),
    author_id: z.string().nullable(),
    content: z.string(),
    content_json: ContentDocumentSchema.nullable(),
    metadata: z.strictObject({ type: z.string(), data: z.record(z.string(), z.unknown()) }).nullable(),
    thread_id: z.string().nullable().describe('The root message of the thread; null on top-level messages'),
    thread: ThreadSchema.nullable(),
    reactions: z.array(ReactionSummarySchema),
    card_origin: z.string().nullable(),
    mentioned_user_ids: z.array(z.string()),
    mentioned_group_ids: fromLevel(
      GROUP_MENTIONS,
      z
        .array(z.string())
        .optional()
        .describe('`"here"`, `"channel"` and user group ids the content mentions; the people they reached are in mentioned_user_ids. On every Message at feature level 3'),
    ),
    display: MessageDisplaySchema.nullable(),
    webhook_id: z.string().nullable(),
    created_at: Timestamp,
    edited_at: Timestamp.nullable(),
    streaming: fromLevel(MESSAGE_STREAMING, z.boolean().optional().describe('True while an agent is still writing the message (append, then finish); on every Message at feature level 3')),
    pinned_at: fromLevel(MESSAGE_PINS, Timestamp.nullable().optional().describe('When the message was pinned in its conversation; null when it is not pinned (feature level 3)')),
    pinned_by: fromLevel(MESSAGE_PINS, z.string().nullable().optional().describe('Who pinned it; null when it is not pinned (feature level 3)')),
    unfurls: fromLevel(MESSAGE_UNFURLS, z.array(UnfurlSchema).optional().describe('Link previews of up to 3 https links, added by the worker (message.updated follows); on every Message at feature level 3')),
  }),
);

export type MessageObject = z.infer<typeof MessageSchema>;

/**
 * The one field list of a Message, in the order of its JSON. messagePresenter
 * writes these keys in this order, and history pages are rendered by Postgres
 * from the same list (MESSAGE_FIELD_SQL, messages.store.ts): a test holds the
 * two byte for byte.
 */
export const MESSAGE_FIELDS = [
  'id',
  'channel_id',
  'author_id',
  'content',
  'content_json',
  'metadata',
  'thread_id',
  'thread',
  'reactions',
  'card_origin',
  'mentioned_user_ids',
  'mentioned_group_ids',
  'display',
  'webhook_id',
  'created_at',
  'edited_at',
  'streaming',
  'pinned_at',
  'pinned_by',
  'unfurls',
] as const satisfies readonly (keyof z.infer<typeof MessageSchema>)[];
export type MessageField = (typeof MESSAGE_FIELDS)[number];

/**
 * The Message's fields at a level, in the order of its JSON: the ones the
 * schema declares for other levels (fromLevel) left out. The history page
 * (messages.store.ts) renders these; messagePresenter gives the same.
 */
export const messageFieldsAt = (level: FeatureLevel): readonly MessageField[] => {
  const absent = new Set(fieldsAbsentAt(MessageSchema.shape, level));
  return MESSAGE_FIELDS.filter((field) => !absent.has(field));
};
// Every field of the Message object is in the list: a missing one fails to compile here.
const everyFieldListed: Record<Exclude<keyof z.infer<typeof MessageSchema>, MessageField>, never> = {};
void everyFieldListed;

/** Renders a Message from its row and its reactions. */
export type PresentMessage = (row: MessageRow, reactions?: ReactionSummary[]) => MessageObject;

/**
 * The Message object of a level (its schema is the OpenAPI document's,
 * services/api/openapi.ts), plus `display` and `webhook_id` for webhook posts:
 * the fields of messageFieldsAt, as the history page renders them. Made once
 * per runtime (services/core/presenters.ts), so rendering asks no level.
 */
export const messagePresenter = (level: FeatureLevel): PresentMessage => {
  const fields = messageFieldsAt(level);
  const streaming = fields.includes('streaming');
  const pins = fields.includes('pinned_at');
  const unfurls = fields.includes('unfurls');
  const groups = fields.includes('mentioned_group_ids');
  if (!streaming && !pins && !unfurls) return (row, reactions = []) => presentFields(row, reactions, groups);
  return (row, reactions = []) => {
    const message = presentFields(row, reactions, groups);
    if (streaming) message.streaming = row.streaming ?? false;
    if (pins) {
      message.pinned_at = row.pinned_at ?? null;
      message.pinned_by = row.pinned_by ?? null;
    }
    if (unfurls) message.unfurls = row.unfurls ?? [];
    return message;
  };
};

const presentFields = (row: MessageRow, reactions: ReactionSummary[], groups: boolean): MessageObject => ({
  id: row.id,
  channel_id: row.channel_id,
  author_id: row.author_id,
  content: row.content,
  content_json: row.content_json ?? null,
  metadata: row.metadata ?? null,
  thread_id: row.thread_id,
  thread: row.reply_count ? { reply_count: row.reply_count, last_reply_at: row.last_reply_at ?? null } : null,
  reactions,
  card_origin: row.card_origin,
  mentioned_user_ids: row.mentioned_user_ids ?? [],
  // Beside mentioned_user_ids, where the level has it (the JSON's key order is the field list's).
  ...(groups ? { mentioned_group_ids: row.mentioned_group_ids ?? [] } : {}),
  display: row.display ?? null,
  webhook_id: row.webhook_id ?? null,
  created_at: row.created_at,
  edited_at: row.edited_at,
});

export const ReactionSchema = named(
  'Reaction',
  z.strictObject({ message_id: z.string(), emoji: z.string(), user_id: z.string(), created_at: Timestamp }),
);

export const presentReaction = (r: { message_id: string; emoji: string; user_id: string; created_at: Date }): z.infer<typeof ReactionSchema> => ({
  message_id: r.message_id,
  emoji: r.emoji,
  user_id: r.user_id,
  created_at: r.created_at,
});

/** An earlier version of a message (edit history, level 3). */
export const MessageEditSchema = named(
  'MessageEdit',
  z.strictObject({
    content: z.string(),
    content_json: ContentDocumentSchema.nullable(),
    metadata: z.strictObject({ type: z.string(), data: z.record(z.string(), z.unknown()) }).nullable(),
    edited_at: Timestamp.describe('When this version was written (the message\'s created_at for the first version)'),
    editor_id: z.string().nullable().describe('Who wrote this version'),
  }),
);

export const presentMessageEdit = (row: {
  content: string;
  content_json: unknown;
  metadata: unknown;
  edited_at: Date;
  editor_id: string | null;
}): z.infer<typeof MessageEditSchema> => ({
  content: row.content,
  content_json: (row.content_json ?? null) as ContentDocument | null,
  metadata: (row.metadata ?? null) as MessageObject['metadata'],
  edited_at: row.edited_at,
  editor_id: row.editor_id,
});
