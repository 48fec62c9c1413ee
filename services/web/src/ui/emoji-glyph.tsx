// Custom emoji drawn as images (feature level 3, lib/custom-emoji.ts): in a
// message's text (`:name:`) and as a reaction. The image's alt text is the
// shortcode, so a screen reader and a copy both read `:name:`.
import { reactionChar, replaceShortcodes } from '../lib/emoji.js';
import { customEmojiSrc, splitCustomEmoji } from '../lib/custom-emoji.js';

export function CustomEmojiImage({ name, src }: { name: string; src: string }) {
  return <img class="custom-emoji" src={src} alt={`:${name}:`} title={`:${name}:`} loading="lazy" />;
}

/** Text with its shortcodes drawn: standard ones as characters, custom ones as their images. */
export function EmojiText({ text }: { text: string }) {
  const parts = splitCustomEmoji(text);
  if (parts.length === 1 && typeof parts[0] === 'string') return <>{replaceShortcodes(parts[0])}</>;
  return <>{parts.map((p, i) => (typeof p === 'string' ? replaceShortcodes(p) : <CustomEmojiImage key={i} name={p.emoji} src={p.src} />))}</>;
}

/** A reaction's emoji: a custom one's image, else the character (or `:name:` while unknown). */
export function ReactionGlyph({ emoji }: { emoji: string }) {
  const src = /^[a-z0-9_+-]+$/i.test(emoji) ? customEmojiSrc(emoji) : null;
  return src ? <CustomEmojiImage name={emoji} src={src} /> : <>{reactionChar(emoji)}</>;
}

/** In HTML already sanitized (ui/markdown.ts): each custom `:name:` of a text node becomes its image. */
export function emojifyCustom(root: DocumentFragment) {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const found: Text[] = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) if (!n.parentElement?.closest('code, pre')) found.push(n as Text);
  for (const node of found) {
    const parts = splitCustomEmoji(node.nodeValue ?? '');
    if (parts.length === 1 && typeof parts[0] === 'string') continue;
    node.replaceWith(
      ...parts.map((p) => {
        if (typeof p === 'string') return p;
        const img = document.createElement('img');
        img.className = 'custom-emoji';
        img.src = p.src;
        img.alt = `:${p.emoji}:`;
        img.title = `:${p.emoji}:`;
        return img;
      }),
    );
  }
}
