// Emoji from emojibase-data (the Unicode set with labels and tags, GitHub /
// Slack shortcodes), loaded as a separate chunk (618 KB) only when it is
// needed: the picker opens, or a shortcode not among the common ones built
// into the first load (lib/emoji-common.ts) must be drawn. So a channel with
// reactions and `:tada:` in its text loads none of it. Until it has loaded an
// unknown `:shortcode:` shows as typed; listeners re-render once it has.
import { COMMON_EMOJI } from './emoji-common.js';
import type { KeyValueStorage } from './store.js';

export interface EmojiEntry {
  unicode: string;
  label: string;
  shortcodes: string[];
  tags: string[];
  group: number;
}

interface EmojiData {
  byCode: Map<string, string>;
  list: EmojiEntry[];
}

interface CompactEmoji {
  hexcode: string;
  label: string;
  unicode: string;
  group?: number;
  order?: number;
  tags?: string[];
}

let data: EmojiData | null = null;
let loading: Promise<EmojiData> | null = null;
const listeners = new Set<() => void>();

/** Loads the data once; resolves with it. */
export function loadEmoji(): Promise<EmojiData> {
  loading ??= Promise.all([import('emojibase-data/en/compact.json'), import('emojibase-data/en/shortcodes/github.json')]).then(([compact, github]) => {
    const codes = github.default as Record<string, string | string[]>;
    const byCode = new Map<string, string>();
    const list: EmojiEntry[] = [];
    for (const e of (compact.default as CompactEmoji[]).slice().sort((a, b) => (a.order ?? 0) - (b.order ?? 0))) {
      if (e.group === 2) continue; // components (skin tones, hair, regional letters) are not picked alone
      const raw = codes[e.hexcode];
      const shortcodes = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
      for (const c of shortcodes) byCode.set(c, e.unicode);
      list.push({ unicode: e.unicode, label: e.label, shortcodes, tags: e.tags ?? [], group: e.group ?? 8 });
    }
    data = { byCode, list };
    for (const l of listeners) l();
    return data;
  });
  return loading;
}

export function onEmojiLoaded(listener: () => void) {
  listeners.add(listener);
  return () => void listeners.delete(listener);
}

export const emojiLoaded = () => data !== null;

const SHORTCODE = /:([a-z0-9_+-]{1,60}):/gi;

/**
 * The character of a shortcode (without colons), or null. A common one comes
 * from the built-in map; another one starts loading the data (null meanwhile),
 * unless it has no letter (`:30:` of a time of day is no shortcode to look up).
 */
export function emojiFor(shortcode: string): string | null {
  const code = shortcode.toLowerCase();
  const common = Object.hasOwn(COMMON_EMOJI, code) ? COMMON_EMOJI[code]! : null;
  if (data) return data.byCode.get(code) ?? common;
  if (common === null && /[a-z]/.test(code)) void loadEmoji();
  return common;
}

export const hasShortcode = (text: string) => /:[a-z0-9_+-]{1,60}:/i.test(text);

/** `:tada:` -> 🎉 for every known shortcode; unknown ones stay as typed. */
export function replaceShortcodes(text: string): string {
  if (!hasShortcode(text)) return text;
  return text.replace(SHORTCODE, (whole, code: string) => emojiFor(code) ?? whole);
}

/** A reaction's emoji as shown: a stored shortcode name becomes its character. */
export const reactionChar = (emoji: string) => (/^[a-z0-9_+-]+$/i.test(emoji) ? emojiFor(emoji) ?? `:${emoji}:` : emoji);

export const GROUPS = ['Smileys', 'People', 'Components', 'Animals and nature', 'Food and drink', 'Travel and places', 'Activities', 'Objects', 'Symbols', 'Flags'];

/**
 * Emoji whose label, tags or shortcodes contain every word of the query, best
 * first: a shortcode or label that is the query, then one that starts with it,
 * then a whole tag, then the rest (each in the data's order). So "heart" gives
 * ❤️ before 😍, and "+1" gives 👍 first.
 */
export function searchEmoji(list: EmojiEntry[], query: string, limit = 200): EmojiEntry[] {
  const q = query.toLowerCase().trim().replace(/^:|:$/g, '');
  const words = q.split(/\s+/).filter(Boolean);
  if (!words.length) return list.slice(0, limit);
  const rank = (e: EmojiEntry) => {
    const label = e.label.toLowerCase();
    if (e.shortcodes.includes(q) || label === q) return 0;
    if (e.shortcodes.some((c) => c.startsWith(q)) || label.startsWith(q)) return 1;
    if (e.tags.includes(q)) return 2;
    return 3;
  };
  const found: { e: EmojiEntry; rank: number; at: number }[] = [];
  list.forEach((e, at) => {
    const hay = `${e.label} ${e.tags.join(' ')} ${e.shortcodes.join(' ')}`.toLowerCase();
    if (words.every((w) => hay.includes(w))) found.push({ e, rank: rank(e), at });
  });
  return found.sort((a, b) => a.rank - b.rank || a.at - b.at).slice(0, limit).map((f) => f.e);
}

const RECENT_ITEM = 'axid.emoji.recent';
const RECENT_MAX = 16;

/** Recently used emoji (characters), newest first. */
export function recentEmoji(storage: KeyValueStorage): string[] {
  try {
    const v = JSON.parse(storage.getItem(RECENT_ITEM) ?? '[]') as unknown;
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string').slice(0, RECENT_MAX) : [];
  } catch {
    return [];
  }
}

export function noteRecentEmoji(storage: KeyValueStorage, unicode: string) {
  storage.setItem(RECENT_ITEM, JSON.stringify([unicode, ...recentEmoji(storage).filter((x) => x !== unicode)].slice(0, RECENT_MAX)));
}
