// HTML in `content` is sanitized on write (contract §5) while plain markdown is
// kept byte for byte. The rule:
// - Slack-style tokens (`<https://x.y|label>`, `<mailto:a@b.c>`, `<@U123>`,
//   `<#C1|general>`, `<!here>`) and code (fenced blocks, `code spans`) are not
//   HTML; if nothing else looks like an HTML tag, the content is markdown and is
//   stored exactly as written, except that link targets with a script scheme
//   (`[x](javascript:...)`, `<javascript:...>`) get an `unsafe:` prefix.
// - Otherwise it is HTML and goes through sanitize-html with an allow-list: no
//   script/style, no event-handler or style attributes, only http(s)/mailto URLs.
//   Its text is then HTML-escaped (`a < b` becomes `a &lt; b`), as HTML requires.
import sanitizeHtml from 'sanitize-html';

const SLACK_TOKEN = /<(?:(?:https?:\/\/|mailto:)[^\s<>|"']+(?:\|[^<>"'=]*)?|[@#!][A-Za-z0-9_.^-]+(?:\|[^<>"'=]*)?)>/g;
const CODE = /```[\s\S]*?(?:```|$)|`[^`\n]+`/g;
/** `<tag`, `</tag` followed by space, `/`, `>` or the end; comments, doctypes, CDATA and PIs. */
const HTML_LIKE = /<\/?[a-zA-Z][a-zA-Z0-9-]*(?=[\s/>]|$)|<[!?]/;
const SCRIPT_SCHEME = /(\]\(\s*<?\s*|<|^[ \t]*\[[^\]\n]+\]:[ \t]*<?)((?:javascript|vbscript|data)[ \t]*:)/gim;

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
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesAppliedToAttributes: ['href', 'src', 'cite'],
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
};

export const looksLikeHtml = (content: string) => HTML_LIKE.test(content.replace(SLACK_TOKEN, '').replace(CODE, ''));

export function sanitizeContent(content: string): string {
  if (!looksLikeHtml(content)) return content.replace(SCRIPT_SCHEME, '$1unsafe:$2');
  return sanitizeHtml(content, OPTIONS);
}
