export interface MessageRow {
  id: string;
  seq: number;
  workspace_id: string;
  channel_id: string;
  author_id: string | null;
  thread_id: string | null;
  content: string;
  content_json: unknown;
  metadata: { type: string; data: Record<string, unknown> } | null;
  card_origin: string | null;
  mentioned_user_ids: string[];
  display: Record<string, unknown> | null;
  webhook_id: string | null;
  created_at: Date;
  edited_at: Date | null;
  /** From the LEFT JOIN on threads (roots only). */
  reply_count?: number | null;
  last_reply_at?: Date | null;
}

export interface ReactionSummary {
  emoji: string;
  count: number;
  user_ids: string[];
}

/** The Message object (contract §4), plus `display` and `webhook_id` for webhook posts. */
export const presentMessage = (row: MessageRow, reactions: ReactionSummary[] = []) => ({
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
  display: row.display ?? null,
  webhook_id: row.webhook_id ?? null,
  created_at: row.created_at,
  edited_at: row.edited_at,
});

export type MessageObject = ReturnType<typeof presentMessage>;

export const presentReaction = (r: { message_id: string; emoji: string; user_id: string; created_at: Date }) => ({
  message_id: r.message_id,
  emoji: r.emoji,
  user_id: r.user_id,
  created_at: r.created_at,
});
