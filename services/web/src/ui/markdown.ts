// `content` (markdown, or HTML the server already sanitized) -> safe HTML:
// markdown-it with raw HTML off, then DOMPurify with the one link rule of
// lib/links.ts, as a second defence. content_json never goes through here.
import DOMPurify from 'dompurify';
import { emojiLoaded, hasShortcode, replaceShortcodes } from '../lib/emoji.js';
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

export function contentToHtml(content: string): string {
  const key = `${emojiLoaded() ? 'e' : 'n'}${content}`;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  const html = looksLikeHtml(content) ? content : md.render(content);
  const fragment = DOMPurify.sanitize(html, { ...PURIFY, RETURN_DOM_FRAGMENT: true });
  if (hasShortcode(content)) emojify(fragment);
  const box = document.createElement('div');
  box.append(fragment);
  if (cache.size > 5000) cache.clear();
  cache.set(key, box.innerHTML);
  return box.innerHTML;
}
