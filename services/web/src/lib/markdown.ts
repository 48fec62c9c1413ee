// The one markdown parser of the app (markdown-it, raw HTML off): the
// renderer of `content` (ui/markdown.ts) and the composer's document of a
// message with mentions (lib/mentions.ts) read markdown the same way.
import MarkdownIt from 'markdown-it';

// Single newlines are line breaks, as people expect in chat.
export const md = new MarkdownIt({ html: false, linkify: true, breaks: true });
