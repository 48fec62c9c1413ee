// `content` (markdown, or HTML the server already sanitized) -> safe HTML:
// markdown-it with raw HTML off, then DOMPurify with the one link rule of
// lib/links.ts, as a second defence. content_json never goes through here.
import DOMPurify from 'dompurify';
import { emojiLoaded, hasShortcode, replaceShortcodes } from '../lib/emoji.js';
import { customEmojiVersion, hasCustomEmoji } from '../lib/custom-emoji.js';
import { emojifyCustom } from './emoji-glyph.js';
import { safeUrl } from '../lib/links.js';
import { md } from '../lib/markdown.js';

// markdown-it's own link check allows http: and data:image; ours is stricter and runs in the hook below.

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    const href = safeUrl(node.getAttribute('href'));
    if (href) {
      node.setAttribute('href', href);
      node.setAttribute('target', '_blank');
      node.setAttribute('rel', 'noopener noreferrer');
    } else node.removeAttribute('href');
  }
  if (node.tagName === 'IMG') {
    const src = safeUrl(node.getAttribute('src'), { allowMailto: false });
    if (src) node.setAttribute('src', src);
    else node.removeAttribute('src');
  }
});

// The one class let through: markdown-it's `language-x` on a code block's <code>, which picks its syntax colours (ui/code-block.tsx).
DOMPurify.addHook('uponSanitizeAttribute', (node, data) => {
  if (data.attrName === 'class' && node.tagName === 'CODE' && /^language-[A-Za-z0-9_+#.-]{1,40}$/.test(data.attrValue)) data.forceKeepAttr = true;
});

const PURIFY = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'object', 'embed'],
  FORBID_ATTR: ['style', 'class', 'id'],
};

/** Content that is already HTML (webhook and bot posts sanitized by the server). */
const looksLikeHtml = (s: string) => /^\s*<(p|div|blockquote|b|i|a|ul|ol|pre|code|strong|em|br|span|h[1-6]|table)\b/i.test(s);

/** `:shortcode:` in the text (never inside code) becomes its emoji, in markdown and server HTML alike. */
function emojify(root: DocumentFragment) {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (n.parentElement?.closest('code, pre')) continue;
    const text = n.nodeValue ?? '';
    if (hasShortcode(text)) n.nodeValue = replaceShortcodes(text);
  }
}

const cache = new Map<string, string>();

/** A message as plain text, as it reads once rendered (search snippets): no markdown marks, mentions by name. */
export function plainText(content: string, doc?: { content?: unknown[] } | null, nameOf: (id: string, label: string) => string = (_id, label) => label): string {
  if (doc && Array.isArray(doc.content) && doc.content.length) {
    const out: string[] = [];
    const walk = (n: { type?: string; text?: string; attrs?: Record<string, unknown>; content?: unknown[] }) => {
      if (n.type === 'text') out.push(n.text ?? '');
      else if (n.type === 'mention') out.push(`@${nameOf(String(n.attrs?.id ?? ''), String(n.attrs?.label ?? 'someone'))}`);
      else if (n.type === 'hard_break' || n.type === 'hardBreak') out.push(' ');
      for (const c of n.content ?? []) walk(c as typeof n);
      if (n.type === 'paragraph' || n.type === 'heading' || n.type === 'list_item' || n.type === 'listItem') out.push(' ');
    };
    for (const c of doc.content) walk(c as Parameters<typeof walk>[0]);
    return out.join('').replace(/\s+/g, ' ').trim();
  }
  const box = document.createElement('div');
  // DOMPurify's output (contentToHtml), read back as text only.
  box.innerHTML = contentToHtml(content).replace(/<\/(p|li|h[1-6]|pre|blockquote)>|<br\s*\/?>/g, '$& ');
  // A custom emoji (level 3) reads as its shortcode.
  for (const img of box.querySelectorAll<HTMLImageElement>('img.custom-emoji')) img.replaceWith(img.alt);
  return (box.textContent ?? '').replace(/\s+/g, ' ').trim();
}

export function contentToHtml(content: string): string {
  // Drawn again when the emoji data or the workspace's custom emoji (level 3) arrive.
  const key = `${emojiLoaded() ? 'e' : 'n'}${customEmojiVersion()}:${content}`;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  const html = looksLikeHtml(content) ? content : md.render(content);
  const fragment = DOMPurify.sanitize(html, { ...PURIFY, RETURN_DOM_FRAGMENT: true });
  if (hasShortcode(content)) emojify(fragment);
  if (hasCustomEmoji() && hasShortcode(content)) emojifyCustom(fragment);
  const box = document.createElement('div');
  box.append(fragment);
  if (cache.size > 5000) cache.clear();
  cache.set(key, box.innerHTML);
  return box.innerHTML;
}
