// The chat-platform-compatible payload (docs/webhooks.md): what is read from it,
// what counts as "something to show", and how attachments are rendered as
// quoted text and quote blocks. Pure functions, no I/O: the server never
// fetches any URL a payload contains.
import { invalid } from '../../../shared/errors.js';
import { checkInput } from '../../../shared/http/input.js';

export const MAX_CONTENT = 40_000;
const MAX_ATTACHMENTS = 50;
const MAX_FIELDS = 50;

export interface CompatField {
  title: string | null;
  value: string | null;
}

export interface CompatAttachment {
  fallback: string | null;
  pretext: string | null;
  title: string | null;
  title_link: string | null;
  text: string | null;
  fields: CompatField[];
  footer: string | null;
  /** `good`, `warning`, `danger` or `#rrggbb` (the card's colour bar); anything else is dropped. */
  color: string | null;
}

export interface Display {
  username?: string;
  icon_emoji?: string;
  icon_url?: string;
}

export interface CompatPost {
  text: string | null;
  attachments: CompatAttachment[];
  display: Display | null;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A non-empty string (numbers, as some senders send for field values, become strings); anything else is skipped. */
function piece(value: unknown): string | null {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string') return null;
  return value.trim() === '' ? null : value;
}

/** The body as sent: a JSON object, or a form whose `payload` field holds one. */
export function compatBody(body: unknown): Json {
  if (!isObject(body)) throw invalid('body: must be a JSON object, or a form with a payload=<json> field');
  if (typeof body.payload === 'string') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.payload);
    } catch {
      throw invalid('payload: is not valid JSON');
    }
    if (!isObject(parsed)) throw invalid('payload: must be a JSON object');
    // The route layer saw one string; the strings inside it follow the same rule.
    checkInput(parsed, 'payload');
    return parsed;
  }
  return body;
}

export function readAttachment(raw: unknown): CompatAttachment | null {
  if (!isObject(raw)) return null;
  const fields = Array.isArray(raw.fields)
    ? raw.fields
        .slice(0, MAX_FIELDS)
        .filter(isObject)
        .map((f) => ({ title: piece(f.title), value: piece(f.value) }))
        .filter((f) => f.title !== null || f.value !== null)
    : [];
  return {
    fallback: piece(raw.fallback),
    pretext: piece(raw.pretext),
    title: piece(raw.title),
    title_link: piece(raw.title_link),
    text: piece(raw.text),
    fields,
    footer: piece(raw.footer),
    color: readColor(raw.color),
  };
}

function readColor(value: unknown): string | null {
  const c = piece(value);
  if (!c) return null;
  if (/^(good|warning|danger)$/.test(c)) return c;
  const hex = /^#?([0-9a-f]{6}|[0-9a-f]{3})$/i.exec(c);
  return hex ? `#${hex[1]!.toLowerCase()}` : null;
}

const showsSomething = (a: CompatAttachment) =>
  Boolean(a.fallback || a.pretext || a.title || a.text || a.footer || a.fields.length);

/**
 * Reads `text`, `username`, `icon_emoji`, `icon_url` and `attachments`; every
 * other field (`channel`, `blocks`, `response_url`, ...) is ignored. Refuses
 * with 400 validation_error a body with nothing to show.
 */
export function readCompatPost(body: unknown): CompatPost {
  const payload = compatBody(body);
  if (payload.text !== undefined && payload.text !== null && typeof payload.text !== 'string') {
    throw invalid('text: must be a string');
  }
  if (payload.attachments !== undefined && payload.attachments !== null && !Array.isArray(payload.attachments)) {
    throw invalid('attachments: must be an array');
  }
  const text = piece(payload.text);
  if (text !== null && text.length > MAX_CONTENT) throw invalid(`text: must be at most ${MAX_CONTENT} characters`);
  const attachments = (Array.isArray(payload.attachments) ? payload.attachments : [])
    .slice(0, MAX_ATTACHMENTS)
    .map(readAttachment)
    .filter((a): a is CompatAttachment => a !== null && showsSomething(a));

  if (text === null && attachments.length === 0) {
    const hasBlocks = Array.isArray(payload.blocks) && payload.blocks.length > 0;
    throw invalid(
      hasBlocks
        ? 'blocks: block layouts are not supported; send text or attachments'
        : 'text: is required (or attachments with a fallback, pretext, title, text, fields or footer)',
    );
  }
  return { text, attachments, display: readDisplay(payload) };
}

/** Display-only overrides; kept as given (bounded), never fetched. */
export function readDisplay(payload: Json): Display | null {
  const display: Display = {};
  const username = piece(payload.username);
  if (username) display.username = username.slice(0, 80);
  const emoji = piece(payload.icon_emoji);
  if (emoji && /^:[a-z0-9_+'-]{1,62}:$/i.test(emoji)) display.icon_emoji = emoji;
  const iconUrl = piece(payload.icon_url);
  if (iconUrl && iconUrl.length <= 2048 && absoluteHttpUrl(iconUrl)) display.icon_url = iconUrl;
  return Object.keys(display).length ? display : null;
}

export function absoluteHttpUrl(value: string): boolean {
  try {
    const url = new URL(value); // throws on relative links
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

/** What the message says until the worker has rendered the attachments (the text as markdown). */
export function placeholderContent(post: CompatPost, groupMentions = false): string {
  if (post.text) return mrkdwnToMarkdown(post.text, groupMentions);
  const first = post.attachments[0]!;
  const f = first.fields[0];
  return (first.fallback ?? first.pretext ?? first.title ?? first.text ?? first.footer ?? (f ? f.title ?? f.value : null) ?? '').slice(
    0,
    MAX_CONTENT,
  );
}

/** Slack link syntax `<https://x|label>` as markdown; `<https://x>` as the bare address. */
export function slackLinksToMarkdown(text: string): string {
  return text.replace(/<(https?:\/\/[^|>\s]+)(?:\|([^>]*))?>/g, (_m, url: string, label?: string) =>
    label ? `[${label}](${url})` : url,
  );
}

// ---- mrkdwn -------------------------------------------------------------
// The chat platform's own markup ("mrkdwn"): *bold*, _italic_, ~strike~,
// `code`, <https://x|label> and <https://x>, with &amp; &lt; &gt; escaped. It
// is turned into the app's markdown (content) and into marked text nodes
// (content_json) at ingest, so every client shows it as the sender meant.
// Other <...> forms (<@U123>, <!here>) stay as typed.

interface Piece {
  text: string;
  marks: ('bold' | 'italic' | 'strike' | 'code')[];
  href?: string;
}

const MRKDWN =
  /`([^`\n]+)`|<(https?:\/\/[^|>\s]+)(?:\|([^>]*))?>|(?<![\w*])\*(?=\S)([^*\n]*?\S)\*(?![\w*])|(?<![\w_])_(?=\S)([^_\n]*?\S)_(?![\w_])|(?<![\w~])~(?=\S)([^~\n]*?\S)~(?![\w~])/g;

const unescape = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

/** The pieces of a mrkdwn line, their texts still escaped as sent. */
export function parseMrkdwn(text: string): Piece[] {
  const out: Piece[] = [];
  let at = 0;
  for (const m of text.matchAll(MRKDWN)) {
    if (m.index > at) out.push({ text: text.slice(at, m.index), marks: [] });
    const [, code, url, label, bold, italic, strike] = m;
    if (code !== undefined) out.push({ text: code, marks: ['code'] });
    else if (url !== undefined) out.push({ text: label || url, marks: [], href: url });
    else {
      // The inside may hold links and other marks (`*<https://x|Runbook>*`).
      const mark = bold !== undefined ? 'bold' : italic !== undefined ? 'italic' : 'strike';
      for (const p of parseMrkdwn((bold ?? italic ?? strike)!)) out.push({ ...p, marks: p.marks.includes(mark) ? p.marks : [mark, ...p.marks] });
    }
    at = m.index + m[0].length;
  }
  if (at < text.length) out.push({ text: text.slice(at), marks: [] });
  return out;
}

const MD_WRAP = { bold: '**', italic: '*', strike: '~~', code: '`' } as const;

/** `<!here>` and `<!channel>`, with a label or not: the platform's group mentions. */
const SLACK_GROUP_MENTION = /<!(here|channel)(?:\|[^>]*)?>/g;

/**
 * Level 3 (contract §14): the message's own text writes the platform's group
 * mentions as ours, `@here` and `@channel` (outside code and link labels),
 * which is also how the platform shows them. Attachments mention no one there
 * either, so only the text is given this.
 */
const withGroupMentions = (p: Piece): Piece => (p.marks.includes('code') || p.href ? p : { ...p, text: p.text.replace(SLACK_GROUP_MENTION, '@$1') });

/** mrkdwn as the app's markdown (entities stay escaped: markdown reads them as the characters). */
export function mrkdwnToMarkdown(text: string, groupMentions = false): string {
  return parseMrkdwn(text)
    .map((p) => (groupMentions ? withGroupMentions(p) : p))
    .map((p) => p.marks.reduceRight((t, mark) => `${MD_WRAP[mark]}${t}${MD_WRAP[mark]}`, p.href ? `[${p.text}](${p.href})` : p.text))
    .join('');
}

export interface DocNode {
  type: string;
  text?: string;
  marks?: { type: string; attrs?: { href: string } }[];
  attrs?: Record<string, unknown>;
  content?: DocNode[];
}

/** mrkdwn as inline text nodes with marks; links only to https addresses (the block rules), else plain text. */
export function inlineNodes(text: string, extra: string[] = [], groupMentions = false): DocNode[] {
  return parseMrkdwn(text)
    .map((p) => (groupMentions ? withGroupMentions(p) : p))
    .filter((p) => p.text !== '')
    .map((p) => {
      const marks: NonNullable<DocNode['marks']> = [...extra, ...p.marks].map((type) => ({ type }));
      if (p.href?.startsWith('https://')) marks.push({ type: 'link', attrs: { href: p.href } });
      return { type: 'text', text: unescape(p.text), ...(marks.length ? { marks } : {}) };
    });
}

/** Lines as paragraphs (hard breaks kept as separate paragraphs). */
const paragraphs = (text: string, groupMentions = false): DocNode[] =>
  text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => ({ type: 'paragraph', content: inlineNodes(line, [], groupMentions) }));

export interface RenderedAttachment {
  /** Lines as markdown (content). */
  markdown: string[];
  /** The attachment as a card: a blockquote node marked `attachment`, with its colour. */
  card: DocNode;
}

export function renderAttachment(a: CompatAttachment): RenderedAttachment {
  const markdown: string[] = [];
  const card: DocNode[] = [];
  const addText = (text: string) => {
    markdown.push(...mrkdwnToMarkdown(text).split('\n'));
    card.push(...paragraphs(text));
  };
  if (a.pretext) addText(a.pretext);
  if (a.title) {
    // A relative link would point at this service: the title stays plain text.
    // The address as parsed (spaces and the like percent-encoded), so it stays one destination.
    const link = a.title_link && absoluteHttpUrl(a.title_link) ? new URL(a.title_link).href : null;
    markdown.push(link ? `**[${a.title}](${link})**` : `**${a.title}**`);
    const marks = link?.startsWith('https://') ? [{ type: 'link', attrs: { href: link } }] : [];
    card.push({ type: 'heading', attrs: { level: 4 }, content: [{ type: 'text', text: a.title, ...(marks.length ? { marks } : {}) }] });
  }
  if (a.text) addText(a.text);
  if (a.fields.length) {
    const items: DocNode[] = [];
    for (const f of a.fields) {
      if (f.title && f.value) markdown.push(`**${f.title}**: ${mrkdwnToMarkdown(f.value)}`);
      else markdown.push(mrkdwnToMarkdown((f.title ?? f.value)!));
      const content = f.title && f.value ? [{ type: 'text', text: f.title, marks: [{ type: 'bold' }] }, { type: 'text', text: ': ' }, ...inlineNodes(f.value)] : inlineNodes((f.title ?? f.value)!);
      items.push({ type: 'list_item', content: [{ type: 'paragraph', content }] });
    }
    card.push({ type: 'bullet_list', attrs: { kind: 'fields' }, content: items });
  }
  if (a.footer) {
    markdown.push(...mrkdwnToMarkdown(a.footer).split('\n'));
    card.push({ type: 'paragraph', attrs: { kind: 'footer' }, content: inlineNodes(a.footer) });
  }
  if (markdown.length === 0 && a.fallback) addText(a.fallback);
  return { markdown, card: { type: 'blockquote', attrs: { kind: 'attachment', color: a.color ?? null }, content: card } };
}

/** The message once rendered: text, then each attachment as a quote (content) and a card (content_json). */
export function renderCompatMessage(text: string | null, attachments: CompatAttachment[], groupMentions = false) {
  const rendered = attachments.map(renderAttachment).filter((r) => r.markdown.length > 0);
  const quotes = rendered.map((r) => r.markdown.map((line) => (line.trim() === '' ? '>' : `> ${line}`)).join('\n'));
  let content = [text ? mrkdwnToMarkdown(text, groupMentions) : null, ...quotes].filter((x): x is string => Boolean(x)).join('\n\n');
  if (content.length > MAX_CONTENT) content = `${content.slice(0, MAX_CONTENT - 1)}…`;
  const doc = { type: 'doc', content: [...(text ? paragraphs(text, groupMentions) : []), ...rendered.map((r) => r.card)] };
  return { content, doc };
}
