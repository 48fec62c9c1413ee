// `content` (markdown, or HTML the server already sanitized) -> safe HTML:
// markdown-it with raw HTML off, then DOMPurify with the one link rule of
// lib/links.ts, as a second defence. content_json never goes through here.
import DOMPurify from 'dompurify';
import MarkdownIt from 'markdown-it';
import { safeUrl } from '../lib/links.js';

const md = new MarkdownIt({ html: false, linkify: true, breaks: true });
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

export function contentToHtml(content: string): string {
  const html = looksLikeHtml(content) ? content : md.render(content);
  return DOMPurify.sanitize(html, PURIFY);
}
