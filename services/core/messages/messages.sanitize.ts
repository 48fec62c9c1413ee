// What `content` keeps: the markdown/HTML as written, with anything that could
// run script taken out (docs/decisions.md, "Links in content"). Two passes,
// applied to every write of content (posts, edits, webhook posts and the
// worker's rendering of webhook attachments):
// 1. HTML. Slack-style tokens (`<https://x.y|label>`, `<mailto:a@b.c>`,
//    `<@U123>`, `<#C1|general>`, `<!here>`) and code (fenced blocks, `code
//    spans`) are not HTML. If anything else looks like an HTML tag, the content
//    goes through sanitize-html with an allow-list: no script/style, no
//    event-handler or style attributes, only http(s)/mailto URLs. Its text is
//    then HTML-escaped (`a < b` becomes `a &lt; b`), as HTML requires.
//    Plain markdown skips this pass and is kept byte for byte.
// 2. Links, always, HTML or not (after pass 1, whose entity decoding could
//    otherwise assemble a `javascript:` out of `&#106;avascript:`). Every link
//    and image destination, reference definition and autolink is found by a
//    CommonMark parser, decoded as renderers decode it (character references,
//    backslash escapes); one with a scheme other than SAFE_SCHEMES is replaced
//    by `#`, an unsafe autolink `<javascript:x>` becomes text (`\<javascript:x>`).
//    Two parsers, each for what it does well: markdown-it finds out quickly,
//    with its nesting bounded, whether there is anything unsafe at all (almost
//    never); micromark, which reports where each destination is in the text
//    but is slow on large or deeply nested input, then rewrites it. Content
//    too large or too deeply nested for that rewrite is refused instead.
import MarkdownIt, { type Options } from 'markdown-it';
import type Token from 'markdown-it/lib/token.mjs';
import { parse, postprocess, preprocess } from 'micromark';
import { decodeString } from 'micromark-util-decode-string';
import sanitizeHtml from 'sanitize-html';
import { invalid } from '../../../shared/errors.js';

/** Schemes a link or image in content may use (the HTML pass allows the same). */
export const SAFE_SCHEMES = ['http', 'https', 'mailto'];

const SLACK_TOKEN = /<(?:(?:https?:\/\/|mailto:)[^\s<>|"']+(?:\|[^<>"'=]*)?|[@#!][A-Za-z0-9_.^-]+(?:\|[^<>"'=]*)?)>/g;
const CODE = /```[\s\S]*?(?:```|$)|`[^`\n]+`/g;
/** `<tag`, `</tag` followed by space, `/`, `>` or the end; comments, doctypes, CDATA and PIs. */
const HTML_LIKE = /<\/?[a-zA-Z][a-zA-Z0-9-]*(?=[\s/>]|$)|<[!?]/;

const OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: [...sanitizeHtml.defaults.allowedTags, 'img', 'del', 's', 'ins', 'sub', 'sup', 'span'],
  allowedAttributes: {
    a: ['href', 'name', 'title', 'target', 'rel'],
    img: ['src', 'alt', 'title', 'width', 'height'],
    code: ['class'],
    ol: ['start'],
    th: ['colspan', 'rowspan'],
    td: ['colspan', 'rowspan'],
  },
  allowedSchemes: SAFE_SCHEMES,
  allowedSchemesAppliedToAttributes: ['href', 'src', 'cite'],
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
};

export const looksLikeHtml = (content: string) => HTML_LIKE.test(content.replace(SLACK_TOKEN, '').replace(CODE, ''));

/**
 * True when a decoded destination has no scheme (a relative link) or a safe
 * one. The scheme is read as the URL standard's parser reads it: leading and
 * trailing controls and spaces dropped, tabs and newlines removed anywhere
 * (`java\tscript:`), then a letter followed by letters, digits, `+`, `-`, `.`
 * up to the first `:`.
 */
export function isSafeDestination(destination: string): boolean {
  const cleaned = destination.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '').replace(/[\t\n\r]/g, '');
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(cleaned)?.[1];
  return scheme === undefined || SAFE_SCHEMES.includes(scheme.toLowerCase());
}

interface Edit {
  start: number;
  end: number;
  text: string;
}

/** Block and inline nesting markdown-it follows; content reaching it is not rewritten. */
const MAX_NESTING = 40;
/** The largest content whose unsafe links are rewritten (micromark's cost grows fast beyond). */
export const MAX_REWRITE = 4_000;

// Every link is made a token (the default drops unsafe ones, which we need to
// see) and its destination kept as decoded, not percent-encoded.
// (`maxNesting` is a preset option the typings leave out.)
const detector = new MarkdownIt('commonmark', { html: true, maxNesting: MAX_NESTING } as Options);
detector.validateLink = () => true;
detector.normalizeLink = (url) => url;

interface LinkScan {
  unsafe: boolean;
  /** The parser stopped at its nesting limit, so deeper links went unseen. */
  tooDeep: boolean;
}

function scanLinks(markdown: string): LinkScan {
  const scan: LinkScan = { unsafe: false, tooDeep: false };
  const env: { references?: Record<string, { href: string }> } = {};
  const stack: Token[] = [...detector.parse(markdown, env)];
  // Definitions, used or not (an unused one renders nothing, but is still stored).
  for (const reference of Object.values(env.references ?? {})) {
    if (!isSafeDestination(reference.href)) scan.unsafe = true;
  }
  while (stack.length > 0) {
    const token = stack.pop()!;
    if (token.level >= MAX_NESTING - 1) scan.tooDeep = true;
    const destination = token.type === 'link_open' ? token.attrGet('href') : token.type === 'image' ? token.attrGet('src') : null;
    if (destination !== null && !isSafeDestination(destination)) scan.unsafe = true;
    if (token.children) stack.push(...token.children);
  }
  return scan;
}

/** Could `markdown` hold a destination at all: `](` (link, image), `]:` (definition) or `<` (autolink)? */
const mayHaveLinks = (markdown: string) => markdown.includes('](') || markdown.includes(']:') || markdown.includes('<');

/** Replaces unsafe link, image and definition destinations and autolinks (pass 2 above). */
export function neutralizeLinks(markdown: string): string {
  // These characters never stand for themselves as a character reference or an escape.
  if (!mayHaveLinks(markdown)) return markdown;
  const before = scanLinks(markdown);
  if (before.tooDeep) throw invalid(`content: quotes, lists or emphasis are nested too deeply (at most about ${MAX_NESTING} levels) to check its links`);
  if (!before.unsafe) return markdown;
  if (markdown.length > MAX_REWRITE) {
    throw invalid(`content: has a link or image whose address uses a scheme other than ${SAFE_SCHEMES.join(', ')}; remove it`);
  }
  const rewritten = rewriteUnsafeLinks(markdown);
  // Both parsers follow CommonMark; should they ever disagree, nothing unsafe is stored.
  if (scanLinks(rewritten).unsafe) {
    throw invalid(`content: has a link or image whose address uses a scheme other than ${SAFE_SCHEMES.join(', ')}; remove it`);
  }
  return rewritten;
}

function rewriteUnsafeLinks(markdown: string): string {
  const events = postprocess(parse().document().write(preprocess()(markdown, undefined, true)));
  const edits: Edit[] = [];
  for (const [kind, token] of events) {
    if (kind !== 'enter') continue;
    if (!['resourceDestinationString', 'definitionDestinationString', 'autolinkProtocol'].includes(token.type)) continue;
    // Offsets are indexes in the string (the tab expansion CommonMark needs is not counted).
    const start = token.start.offset;
    const end = token.end.offset;
    const raw = markdown.slice(start, end);
    if (token.type === 'autolinkProtocol') {
      // The `<` before it: escaped, the autolink is plain text.
      if (!isSafeDestination(raw)) edits.push({ start: start - 1, end: start - 1, text: '\\' });
    } else if (!isSafeDestination(decodeString(raw))) {
      edits.push({ start, end, text: '#' });
    }
  }
  let out = markdown;
  for (const edit of edits.sort((a, b) => b.start - a.start)) out = out.slice(0, edit.start) + edit.text + out.slice(edit.end);
  return out;
}

/** The content as stored; 400 validation_error when it cannot be made safe (see neutralizeLinks). */
export function sanitizeContent(content: string): string {
  const html = looksLikeHtml(content) ? sanitizeHtml(content, OPTIONS) : content;
  return neutralizeLinks(html);
}
