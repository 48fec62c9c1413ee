// The chat-platform-compatible payload (contract §5): what is read from it,
// what counts as "something to show", and how attachments are rendered as
// quoted text and quote blocks. Pure functions, no I/O: the server never
// fetches any URL a payload contains.
import { invalid } from '../../../shared/errors.js';
import { checkInput } from '../../../shared/http/input.js';

export const MAX_CONTENT = 40_000;
const MAX_ATTACHMENTS = 50;
const MAX_FIELDS = 50;
/** A quote block's text limit (shared/blocks). */
const MAX_QUOTE = 4000;

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
  };
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

/** What the message says until the worker has rendered the attachments. */
export function placeholderContent(post: CompatPost): string {
  if (post.text) return post.text;
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

export interface RenderedAttachment {
  /** Lines as plain text (quote block). */
  plain: string[];
  /** The same lines as markdown (content). */
  markdown: string[];
}

export function renderAttachment(a: CompatAttachment): RenderedAttachment {
  const plain: string[] = [];
  const markdown: string[] = [];
  const add = (p: string, m: string = p) => {
    plain.push(...p.split('\n'));
    markdown.push(...m.split('\n'));
  };
  if (a.pretext) add(slackLinksToMarkdown(a.pretext));
  if (a.title) {
    // A relative link would point at this service: the title stays plain text.
    // The address as parsed (spaces and the like percent-encoded), so it stays one destination.
    const linked = a.title_link && absoluteHttpUrl(a.title_link) ? `**[${a.title}](${new URL(a.title_link).href})**` : `**${a.title}**`;
    add(a.title, linked);
  }
  if (a.text) add(slackLinksToMarkdown(a.text));
  for (const f of a.fields) {
    const line = f.title && f.value ? `${f.title}: ${f.value}` : (f.title ?? f.value)!;
    add(slackLinksToMarkdown(line), f.title && f.value ? `**${f.title}**: ${slackLinksToMarkdown(f.value)}` : slackLinksToMarkdown(line));
  }
  if (a.footer) add(slackLinksToMarkdown(a.footer));
  if (plain.length === 0 && a.fallback) add(slackLinksToMarkdown(a.fallback));
  return { plain, markdown };
}

/** The message once rendered: text, then each attachment as a quote. */
export function renderCompatMessage(text: string | null, attachments: CompatAttachment[]) {
  const rendered = attachments.map(renderAttachment).filter((r) => r.plain.length > 0);
  const quotes = rendered.map((r) => r.markdown.map((line) => (line.trim() === '' ? '>' : `> ${line}`)).join('\n'));
  let content = [text, ...quotes].filter((x): x is string => Boolean(x)).join('\n\n');
  if (content.length > MAX_CONTENT) content = `${content.slice(0, MAX_CONTENT - 1)}…`;

  const doc = {
    type: 'doc',
    content: [
      ...(text ? [{ type: 'paragraph', content: [{ type: 'text', text }] }] : []),
      ...rendered.map((r) => {
        let quote = r.plain.join('\n').trim();
        if (quote.length > MAX_QUOTE) quote = `${quote.slice(0, MAX_QUOTE - 1)}…`;
        return { type: 'block_quote', attrs: { blockName: 'quote', version: 1, props: { text: quote } } };
      }),
    ],
  };
  return { content, doc };
}
