import { z } from 'zod';
import { Timestamp, named } from '../../../shared/http/responses.js';

export interface CustomEmojiRow {
  id: string;
  seq: number;
  workspace_id: string;
  name: string;
  original_key: string;
  image_key: string | null;
  status: 'processing' | 'ready' | 'failed';
  created_by: string | null;
  created_at: Date;
}

/** A workspace's own emoji, used as `:name:` in content and reactions (level 3). */
export const CustomEmojiSchema = named(
  'CustomEmoji',
  z.strictObject({
    name: z.string(),
    url: z.string().nullable().describe('The image (at most 128×128), needing no key; null while the worker is still storing it'),
    created_by: z.string().nullable(),
    created_at: Timestamp,
  }),
);
export type CustomEmojiObject = z.infer<typeof CustomEmojiSchema>;

export const emojiImagePath = (id: string) => `/api/v1/emoji-images/${id}`;

export const presentCustomEmoji = (row: CustomEmojiRow, publicBaseUrl: string): CustomEmojiObject => ({
  name: row.name,
  url: row.status === 'ready' ? `${publicBaseUrl}${emojiImagePath(row.id)}` : null,
  created_by: row.created_by,
  created_at: row.created_at,
});
