import { z } from 'zod';
import { isUuid } from '../../../shared/ids.js';

/** 1 to 64 of a-z 0-9 _ + - (the names reactions take). */
export const EMOJI_NAME = /^[a-z0-9_+-]{1,64}$/;
/** 256 KB: the largest image a custom emoji may be uploaded as. */
export const MAX_EMOJI_BYTES = 256 * 1024;
/** Types an emoji image may be (by its bytes, not its claim). */
export const EMOJI_TYPES = new Set(['image/png', 'image/gif', 'image/jpeg', 'image/webp']);
/** The stored image's largest edge. */
export const EMOJI_EDGE = 128;

export const EmojiNameParams = z.object({ name: z.string().regex(EMOJI_NAME, 'must be 1 to 64 of a-z 0-9 _ + -') });
export const EmojiImageParams = z.object({ emoji_id: z.string().refine(isUuid, 'must be an emoji image id') });
