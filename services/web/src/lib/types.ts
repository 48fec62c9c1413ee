// The API's objects as the web app uses them. The request side is typed by the
// generated api-schema.d.ts; these mirror the presenters' responses until the
// OpenAPI document types every response body (then they become aliases of it).
export type Role = 'owner' | 'admin' | 'member';

export interface User {
  id: string;
  name: string;
  display_name: string | null;
  avatar_url: string | null;
  role: Role;
  is_agent: boolean;
  created_at: string;
}

export interface Workspace {
  id: string;
  name: string;
  settings: { max_users?: number | null } & Record<string, unknown>;
  created_at: string;
}

export interface Channel {
  id: string;
  name: string;
  description: string;
  is_private: boolean;
  is_default: boolean;
  parent_channel_id: string | null;
  team_id: string | null;
  created_by: string | null;
  created_at: string;
}

export interface Conversation {
  id: string;
  kind: 'dm' | 'group_dm';
  member_ids: string[];
  created_at: string;
}

export interface Reaction {
  emoji: string;
  count: number;
  user_ids: string[];
}

export interface DocNode {
  type: string;
  text?: string;
  attrs?: Record<string, unknown>;
  marks?: { type: string; attrs?: Record<string, unknown> }[];
  content?: DocNode[];
}

export interface Message {
  id: string;
  channel_id: string;
  author_id: string | null;
  content: string;
  content_json: DocNode | null;
  metadata: { type: string; data: Record<string, unknown> } | null;
  thread_id: string | null;
  thread: { reply_count: number; last_reply_at: string | null } | null;
  reactions: Reaction[];
  card_origin: string | null;
  mentioned_user_ids: string[];
  display?: { username?: string; icon_url?: string; icon_emoji?: string } | null;
  webhook_id?: string | null;
  created_at: string;
  edited_at: string | null;
}

export interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  created_at: string;
  expires_at: string | null;
  key?: string;
}

export interface Webhook {
  id: string;
  name: string;
  channel_id: string;
  url: string;
}

export interface FileInfo {
  id: string;
  name: string;
  size: number;
  content_type: string;
  status: 'processing' | 'ready' | 'failed';
  sha256: string | null;
  created_at: string;
  download_url?: string;
}

export interface ChannelMember {
  channel_id: string;
  user_id: string;
  created_at: string;
  user: User;
}

export interface Page<T> {
  data: T[];
  pagination: { next_cursor: string | null; has_more: boolean };
}

/** The metadata a file message carries, so any client can offer the download. */
export const FILE_METADATA_TYPE = 'axid.file';
