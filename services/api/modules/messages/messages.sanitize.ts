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
// 2. Links. A CommonMark parser (micromark) finds every link and image
//    destination, link reference definition and autolink, always, HTML or not
//    (it runs after pass 1, whose entity decoding could otherwise assemble a
//    `javascript:` out of `&#106;avascript:`). A destination is decoded as a
//    renderer decodes it (character references, backslash escapes) and
//    resolved as a browser resolves it; unless it has no scheme (relative,
//    `#fragment`) or one of SAFE_SCHEMES, it is replaced by `#`. An unsafe
//    autolink `<javascript:x>` becomes text (`\<javascript:x>`).
import { parse, postprocess, preprocess } from 'micromark';
import { decodeString } from 'micromark-util-decode-string';
import sanitizeHtml from 'sanitize-html';

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

/** Replaces unsafe link, image and definition destinations and autolinks (pass 2 above). */
export function neutralizeLinks(markdown: string): string {
  const events = postprocess(parse().document().write(preprocess()(markdown, undefined, true)));
  const edits: Edit[] = [];
  for (const [kind, token] of events) {
    if (kind !== 'enter') continue;
    if (!['resourceDestinationString', 'definitionDestinationString', 'autolinkProtocol'].includes(token.type)) continue;
    // Offsets are indexes in the string (the tab expansion CommonMark needs is not counted).
    const start = token.start.offset;
    const end = token.end.offset;
    const raw = markdown.slice(start, end);
    if (token.type === 'resourceDestinationString' || token.type === 'definitionDestinationString') {
      if (!isSafeDestination(decodeString(raw))) edits.push({ start, end, text: '#' });
    } else if (token.type === 'autolinkProtocol') {
      // The `<` before it: escaped, the autolink is plain text.
      if (!isSafeDestination(raw)) edits.push({ start: start - 1, end: start - 1, text: '\\' });
    }
  }
  let out = markdown;
  for (const edit of edits.sort((a, b) => b.start - a.start)) out = out.slice(0, edit.start) + edit.text + out.slice(edit.end);
  return out;
}

export function sanitizeContent(content: string): string {
  const html = looksLikeHtml(content) ? sanitizeHtml(content, OPTIONS) : content;
  return neutralizeLinks(html);
}
