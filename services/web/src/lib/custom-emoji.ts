// The workspace's custom emoji as the renderer needs them (feature level 3):
// `:name:` -> the address of its image. Kept apart from lib/emoji.ts (the
// Unicode set, loaded lazily) because this list is small and comes from the
// API at start (lib/team-chat.ts). A name of the standard set can never be a
// custom one (the API refuses it), so the two never compete for a shortcode.

/** `:name:` as the API allows custom names: a-z 0-9 _ + - (case-insensitive, as standard shortcodes are read). */
export const CUSTOM_SHORTCODE = /:([a-z0-9_+-]{1,64}):/gi;

let images = new Map<string, string>();
let version = 0;

/**
 * The image of a custom emoji as this page loads it: the API serves it under
 * `/api/v1/emoji-images/<id>` of PUBLIC_BASE_URL; only that path is kept, on
 * the page's own origin (`img-src 'self'`), so no other address is ever drawn.
 */
export function emojiImagePath(url: string | null, origin: string): string | null {
  if (!url) return null;
  try {
    const u = new URL(url, origin);
    return /^\/api\/v1\/emoji-images\/[A-Za-z0-9_-]+$/.test(u.pathname) ? `${origin}${u.pathname}` : null;
  } catch {
    return null;
  }
}

/** Replaces the known set (those the worker has not stored yet, with no `url`, are left out). */
export function setCustomEmoji(list: { name: string; url: string | null }[], origin = globalThis.location?.origin ?? '') {
  const next = new Map<string, string>();
  for (const e of list) {
    const src = emojiImagePath(e.url, origin);
    if (src) next.set(e.name, src);
  }
  images = next;
  version += 1;
}

/** The image of `name` (without colons), or null when it is no custom emoji. */
export const customEmojiSrc = (name: string): string | null => images.get(name.toLowerCase()) ?? null;

/** Changes whenever the set does (the rendered-HTML cache keys on it). */
export const customEmojiVersion = () => version;

export const hasCustomEmoji = () => images.size > 0;

/** Text split into plain parts and custom emoji (`{emoji, src}`), in order; plain text alone when none is known. */
export function splitCustomEmoji(text: string): (string | { emoji: string; src: string })[] {
  if (!images.size || !text.includes(':')) return [text];
  const out: (string | { emoji: string; src: string })[] = [];
  let last = 0;
  for (const m of text.matchAll(CUSTOM_SHORTCODE)) {
    const src = customEmojiSrc(m[1]!);
    if (!src) continue;
    if (m.index > last) out.push(text.slice(last, m.index));
    out.push({ emoji: m[1]!.toLowerCase(), src });
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}
