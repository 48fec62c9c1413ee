// What `content` keeps: the markdown/HTML as written, with anything that could
// run script taken out (docs/decisions.md, "Links in content";
// docs/security.md, "Stored markup"). Applied to every write of content
// (posts, edits, both webhook formats, the worker's rendering of webhook
// attachments), and decided from a CommonMark parser's own reading, so that
// the sanitizer and every CommonMark renderer agree on what is HTML, code and
// a link:
// 1. HTML. markdown-it parses the content (HTML on, as renderers that show raw
//    HTML have it). Code spans and blocks are whatever it says they are, and
//    are left alone. Every `html_block` token goes through sanitize-html with
//    an allow-list (no script/style, no event-handler or style attributes,
//    only http(s)/mailto URLs); every `html_inline` tag is kept, cleaned the
//    same way, or dropped (comments, processing instructions and CDATA always:
//    browsers end them elsewhere than CommonMark does); a declaration such as
//    Slack's `<!here>` is kept (both end it at its `>`). Each token is
//    rewritten where it sits in the text (its offsets tracked through the
//    parse, container prefixes included). Where tags are present, a bare `<`
//    in text is written `&lt;`, as the former HTML pass did.
// 2. Links, always (after pass 1). Every link and image destination, reference
//    definition and autolink is found by the same parse, decoded as renderers
//    decode it (character references, backslash escapes); one with a scheme
//    other than SAFE_SCHEMES is replaced by `#`, an unsafe autolink
//    `<javascript:x>` becomes text (`\<javascript:x>`). micromark, which
//    reports where each destination is in the text, rewrites it.
// Both passes run again on their output until it no longer changes (a fixed
// point is content that the parser finds nothing unsafe in); content that does
// not settle, is too deeply nested to parse whole, or whose HTML sits where it
// cannot be rewritten (a tab partly used as indentation) is refused with 400.
// Plain markdown (no `<`) skips pass 1 and is kept byte for byte.
import MarkdownIt, { type Options } from 'markdown-it';
import type StateBlock from 'markdown-it/lib/rules_block/state_block.mjs';
import type StateInline from 'markdown-it/lib/rules_inline/state_inline.mjs';
import type Token from 'markdown-it/lib/token.mjs';
import { parse, postprocess, preprocess } from 'micromark';
import { decodeString } from 'micromark-util-decode-string';
import sanitizeHtml from 'sanitize-html';
import { invalid } from '../../../shared/errors.js';

/** Schemes a link or image in content may use (the HTML pass allows the same). */
export const SAFE_SCHEMES = ['http', 'https', 'mailto'];

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

/**
 * How much of sanitized `markdown` no text appended after it can read
 * differently: everything before the line where its last top-level block, or
 * the last item of a top-level list, starts. CommonMark reads blocks line by
 * line, forwards: once a later line has opened a new top-level block (or list
 * item), the blocks before it are closed whatever follows, and the text from
 * that line on reads alone as it reads there. (What reaches back is harmless
 * here: a reference definition appended later can make an earlier `[x]` a
 * link, but every definition is checked where it is written; a list's
 * tightness changes spacing only.) A streamed reply's appends sanitize only
 * the text after this point, with the delta (messages.service.ts,
 * appendToMessage), so an append costs the size of its last block, not of the
 * reply. 0 when nothing is settled (one block, or `\r` line ends, whose lines
 * markdown-it counts differently).
 */
export function settledLength(markdown: string): number {
  if (markdown.includes('\r')) return 0;
  const tokens: Token[] = [];
  detector.block.parse(markdown, detector, {}, tokens);
  let line = 0;
  for (const token of tokens) {
    const opens = token.nesting >= 0 && token.map !== null;
    if (opens && (token.level === 0 || (token.level === 1 && token.type === 'list_item_open'))) line = Math.max(line, token.map![0]);
  }
  let at = 0;
  for (let i = 0; i < line; i++) {
    const next = markdown.indexOf('\n', at);
    if (next < 0) return 0;
    at = next + 1;
  }
  return at;
}

/**
 * An append to a streamed reply: `open` is the reply's content after its
 * settled part (sanitized already), `delta` the text appended. Returns the
 * new open part, `tail` (`open + delta` sanitized), how much of its start is
 * settled now (`settles`, in UTF-16 units), and `appended`: what the stored
 * content gained when it only grew, null when sanitizing changed text already
 * sent (the whole message must be sent again then). The settled part is not
 * read at all.
 */
export function sanitizeAppend(open: string, delta: string): { tail: string; settles: number; appended: string | null } {
  const tail = sanitizeContent(open + delta);
  return { tail, settles: settledLength(tail), appended: tail.startsWith(open) ? tail.slice(open.length) : null };
}

/** How many rounds of both passes content may take to settle (each round usually changes nothing). */
const MAX_ROUNDS = 4;

/** The content as stored; 400 validation_error when it cannot be made safe (see the passes above). */
export function sanitizeContent(content: string): string {
  let out = content;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const next = neutralizeLinks(cleanHtml(out));
    if (next === out) return out;
    out = next;
  }
  throw invalid('content: its HTML could not be made safe; remove the HTML');
}

// ---- Pass 1: HTML, token by token, where the parser found it ----

/** Tags whose text goes with them when they are dropped (sanitize-html's nonTextTags, and the other raw-text ones). */
const TEXT_GOES_WITH = new Set(['script', 'style', 'textarea', 'option', 'noscript', 'xmp', 'iframe', 'noembed', 'noframes', 'title', 'plaintext', 'template']);
const ALLOWED_TAGS = new Set(OPTIONS.allowedTags as string[]);

/** Where a line of an inline token's (or HTML block's) text is in the source; null when it is not a plain slice (tabs expanded). */
interface Line {
  start: number | null;
  text: string;
}
/** An inline token's or HTML block's text, as the parser built it from source lines. */
interface Origin {
  lines: Line[];
  /** Characters trimmed off the start of the joined lines. */
  lead: number;
}

interface Tracked {
  origin?: Origin;
  /** html_inline: offsets in the inline token's text. */
  start?: number;
  end?: number;
}

/** Bare `<` positions in each inline token's text (keyed by its children array). */
const bareLt = new WeakMap<Token[], Set<number>>();

// markdown-it keeps its rules in `__rules__` (not in its typings); wrapping one keeps its name, order and alternatives.
type BlockRuleFn = (state: StateBlock, startLine: number, endLine: number, silent: boolean) => boolean;
type InlineRuleFn = (state: StateInline, silent: boolean) => boolean;
const rulesOf = <F>(ruler: unknown) => (ruler as { __rules__: Array<{ name: string; fn: F }> }).__rules__;

function trackedParser(): MarkdownIt {
  const md = new MarkdownIt('commonmark', { html: true, maxNesting: MAX_NESTING } as Options);
  md.validateLink = () => true;
  md.normalizeLink = (url) => url;
  // Each getLines remembers where every line it returns came from.
  const Base = md.block.State;
  class State extends Base {
    lastLines: Line[] = [];
    override getLines(begin: number, end: number, indent: number, keepLastLF: boolean): string {
      const text = super.getLines(begin, end, indent, keepLastLF);
      const parts = text.split('\n');
      this.lastLines = [];
      for (let i = 0, line = begin; line < end; i++, line++) {
        const part = parts[i] ?? '';
        const stop = this.eMarks[line]!;
        this.lastLines.push({ start: this.src.slice(stop - part.length, stop) === part ? stop - part.length : null, text: part });
      }
      return text;
    }
  }
  md.block.State = State as typeof Base;
  const wrapBlock = (name: string) => {
    const rule = rulesOf<BlockRuleFn>(md.block.ruler).find((r) => r.name === name)!;
    const original = rule.fn;
    rule.fn = (state: StateBlock, startLine: number, endLine: number, silent: boolean) => {
      const before = state.tokens.length;
      const ok = original(state, startLine, endLine, silent);
      if (!ok || silent) return ok;
      for (const token of state.tokens.slice(before)) {
        if (token.type !== 'inline' && token.type !== 'html_block') continue;
        const lines = (state as State).lastLines;
        if (name === 'heading') {
          // One line, the text after the #s: its first occurrence from there.
          const lineStart = state.bMarks[startLine]! + state.tShift[startLine]!;
          const at = state.src.indexOf(token.content, lineStart);
          (token.meta as Tracked) = { origin: { lines: [{ start: at < 0 ? null : at, text: token.content }], lead: 0 } };
        } else {
          const joined = lines.map((l) => l.text).join('\n');
          (token.meta as Tracked) = { origin: { lines, lead: Math.max(0, joined.indexOf(token.content)) } };
        }
      }
      return ok;
    };
  };
  for (const name of ['paragraph', 'lheading', 'heading', 'html_block']) wrapBlock(name);
  const inlineRule = rulesOf<InlineRuleFn>(md.inline.ruler).find((r) => r.name === 'html_inline')!;
  const originalInline = inlineRule.fn;
  inlineRule.fn = (state: StateInline, silent: boolean) => {
    const start = state.pos;
    const ok = originalInline(state, silent);
    // The last token: pending text is pushed before it.
    if (ok && !silent) (state.tokens.at(-1)!.meta as Tracked) = { start, end: state.pos };
    return ok;
  };
  // Last of the inline rules: a `<` no other rule took is text.
  md.inline.ruler.push('axid_bare_lt', (state, silent) => {
    if (!silent && state.src.charCodeAt(state.pos) === 0x3c) {
      let set = bareLt.get(state.tokens);
      if (!set) bareLt.set(state.tokens, (set = new Set()));
      set.add(state.pos);
    }
    return false;
  });
  return md;
}

const parser = trackedParser();

/** Where each line of an origin starts in its joined text (made once per origin: a paragraph can have thousands of lines). */
const lineOffsets = new WeakMap<Origin, number[]>();

/** An offset in a token's text → an offset in the source, or null. */
function toSource(origin: Origin, offset: number): number | null {
  let offsets = lineOffsets.get(origin);
  if (!offsets) {
    offsets = [];
    let sum = 0;
    for (const line of origin.lines) {
      offsets.push(sum);
      sum += line.text.length + 1;
    }
    lineOffsets.set(origin, offsets);
  }
  const at = offset + origin.lead;
  // The last line starting at or before `at` (by bisection).
  let [lo, hi] = [0, offsets.length - 1];
  if (hi < 0 || at < 0) return null;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (offsets[mid]! <= at) lo = mid;
    else hi = mid - 1;
  }
  const line = origin.lines[lo]!;
  const within = at - offsets[lo]!;
  if (within > line.text.length) return null;
  return line.start === null ? null : line.start + within;
}

/** What an html_inline tag becomes. */
function cleanInlineTag(tag: string): string {
  if (/^<![A-Za-z]/.test(tag)) return tag; // a declaration (Slack's <!here>): ends at its `>` everywhere
  if (/^<[!?]/.test(tag)) return ''; // comment, processing instruction, CDATA
  const closing = /^<\/([A-Za-z][A-Za-z0-9-]*)/.exec(tag);
  if (closing) return ALLOWED_TAGS.has(closing[1]!.toLowerCase()) ? tag : '';
  const name = /^<([A-Za-z][A-Za-z0-9-]*)/.exec(tag)?.[1]?.toLowerCase() ?? '';
  if (!ALLOWED_TAGS.has(name)) return '';
  // sanitize-html closes what it opened: the tag alone is what comes before that.
  return sanitizeHtml(tag, OPTIONS).replace(new RegExp(`</${name}>$`), '');
}

/** What an html_block becomes. */
function cleanBlock(html: string): string {
  if (/^<![A-Za-z][^>]*>\s*$/.test(html)) return html; // a declaration alone
  return sanitizeHtml(html, OPTIONS);
}

const cannotRewrite = () => invalid('content: has HTML where it cannot be rewritten safely (in a table, or after a tab used as indentation); remove that HTML');

/** Pass 1. Returns `markdown` itself when nothing changes. */
export function cleanHtml(input: string): string {
  if (!input.includes('<')) return input;
  // markdown-it reads \r\n, \r and NUL as \n and U+FFFD; offsets are in that text.
  const markdown = /[\r\0]/.test(input) ? input.replace(/\r\n?/g, '\n').replace(/\0/g, '\uFFFD') : input;
  const tokens = parser.parse(markdown, {});
  const edits: Edit[] = [];
  const lts: Array<{ origin: Origin | undefined; children: Token[] }> = [];
  const cleanTags = new Map<string, string>();
  let hasTags = false;
  for (const token of tokens) {
    if (token.level >= MAX_NESTING - 1) throw invalid(`content: quotes, lists or emphasis are nested too deeply (at most about ${MAX_NESTING} levels) to check its HTML`);
    const origin = (token.meta as Tracked | null)?.origin;
    if (token.type === 'html_block') {
      hasTags ||= !/^<![A-Za-z]/.test(token.content);
      const body = token.content.replace(/\n$/, '');
      const clean = cleanBlock(token.content).replace(/\n$/, '');
      if (clean === body) continue;
      const start = origin && toSource(origin, 0);
      const end = origin && toSource(origin, body.length);
      if (start == null || end == null) throw cannotRewrite();
      // Lines after the first keep their container prefix (`> `, list indentation).
      const second = origin!.lines[1];
      const prefix = second?.start != null ? markdown.slice(markdown.lastIndexOf('\n', second.start - 1) + 1, second.start) : '';
      edits.push({ start, end, text: clean.replace(/\n/g, `\n${prefix}`) });
      continue;
    }
    if (token.type !== 'inline' || !token.children) continue;
    lts.push({ origin, children: token.children });
    const children = token.children;
    for (let i = 0; i < children.length; i++) {
      const child = children[i]!;
      if (child.type !== 'html_inline') continue;
      hasTags ||= !/^<![A-Za-z]/.test(child.content);
      const { start = 0, end = 0 } = (child.meta as Tracked | null) ?? {};
      // The same tag cleaned once per content (a tag repeated thousands of times is one sanitize-html call).
      let clean = cleanTags.get(child.content);
      if (clean === undefined) cleanTags.set(child.content, (clean = cleanInlineTag(child.content)));
      let stop = end;
      const name = /^<([A-Za-z][A-Za-z0-9-]*)/.exec(child.content)?.[1]?.toLowerCase();
      if (name && TEXT_GOES_WITH.has(name)) {
        // Its text goes too, up to its closing tag in the same paragraph.
        const close = children.findIndex((c, j) => j > i && c.type === 'html_inline' && new RegExp(`^</${name}\\s*>$`, 'i').test(c.content));
        if (close > 0) {
          stop = (children[close]!.meta as Tracked).end!;
          i = close;
        }
        clean = '';
      }
      if (clean === child.content && stop === end) continue;
      const from = origin && toSource(origin, start);
      const to = origin && toSource(origin, stop);
      if (from == null || to == null) throw cannotRewrite();
      edits.push({ start: from, end: to, text: clean });
    }
  }
  if (hasTags) {
    // A bare `<` in text, as HTML writes it (kept unless it is rewritten anyway).
    // The tags' edits, in order, are searched by bisection: content can hold
    // tens of thousands of `<`, and a scan of every edit for each was seconds.
    const tagEdits = [...edits].sort((a, b) => a.start - b.start);
    const insideTagEdit = (pos: number) => {
      let [lo, hi] = [0, tagEdits.length - 1];
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        const e = tagEdits[mid]!;
        if (pos < e.start) hi = mid - 1;
        else if (pos >= e.end) lo = mid + 1;
        else return true;
      }
      return false;
    };
    for (const { origin, children } of lts) {
      for (const at of bareLt.get(children) ?? []) {
        const pos = origin && toSource(origin, at);
        if (pos != null && markdown[pos] === '<' && !insideTagEdit(pos)) edits.push({ start: pos, end: pos + 1, text: '&lt;' });
      }
    }
  }
  if (edits.length === 0) return input;
  return applyEdits(markdown, edits);
}

/** The text with non-overlapping edits applied, in one pass (one slice each, not one copy of the whole text each). */
function applyEdits(text: string, edits: Edit[]): string {
  const parts: string[] = [];
  let at = 0;
  for (const edit of edits.sort((a, b) => a.start - b.start || a.end - b.end)) {
    if (edit.start < at) throw cannotRewrite(); // overlapping: should not happen, refuse rather than guess
    parts.push(text.slice(at, edit.start), edit.text);
    at = edit.end;
  }
  parts.push(text.slice(at));
  return parts.join('');
}
