// The one validator of `content_json` documents (docs/decisions.md, "Block URLs"), shared by the
// API, the worker and the tool server. Pure: the allowed card hosts and the
// available blocks come in through `rules`.
//
// The document structure (node fields, depth, node count, paths) is walked by
// hand; block props are checked with the zod schemas in schemas.ts. The walk
// is depth-first in document order and stops at the first problem.
import type { z } from 'zod';
import {
  BUTTON_SHAPE,
  CARD_BLOCKS,
  MAX_LENGTH,
  MENTION_ATTRS_SCHEMA,
  PROPS_SCHEMAS,
  PROPS_SHAPES,
  httpsUrlProblem,
  blockNamesFor,
  isAgentBlock,
  isBlockName,
  isCardBlock,
  type BlockName,
} from './schemas.js';

export interface BlockRules {
  /** Hosts a tracker_issue_card URL may point at; lower-case, no trailing dot. */
  trackerHosts: string[];
  /** Hosts a repo_pr_card URL may point at; lower-case, no trailing dot. */
  codeHosts: string[];
  /** When given, only these block names may be used. */
  availableBlocks?: readonly string[];
  /** Whether the agent blocks (AGENT_BLOCK_NAMES: feedback buttons, approval requests) exist: feature level 3. */
  agentBlocks?: boolean;
}

export type ValidationResult =
  | {
      valid: true;
      preview: string;
      card_origin: string | null;
      mentioned_user_ids: string[];
      /** The document to store: a copy with every URL serialised as parsed (`new URL(url).href`). */
      document: unknown;
    }
  | { valid: false; error_code: 'validation_error'; message: string; path: string; hint: string };

export const MAX_DEPTH = 20; // the doc node is level 1
export const MAX_NODES = 2000; // the doc node counts
export const MAX_BYTES = 65_536; // UTF-8 bytes of JSON.stringify(doc)
export const PREVIEW_LENGTH = 280;

/** The ProseMirror / tiptap node types allowed besides `block_<name>` nodes. */
const NODE_TYPES = new Set([
  'paragraph', 'text', 'heading', 'blockquote',
  'bullet_list', 'bulletList', 'ordered_list', 'orderedList', 'list_item', 'listItem',
  'code_block', 'codeBlock', 'hard_break', 'hardBreak', 'horizontal_rule', 'horizontalRule',
  'mention',
]);
/** Node types that never have children. */
const LEAF_TYPES = new Set(['text', 'mention', 'hard_break', 'hardBreak', 'horizontal_rule', 'horizontalRule']);
/** Node types whose children are inline, so their texts join without a separator. */
const TEXTBLOCK_TYPES = new Set(['paragraph', 'heading', 'code_block', 'codeBlock']);

// Attributes and marks a renderer would pass on (an attribute, a class, a
// style): only the known ones, each of the known shape; anything else is
// refused, naming its path, rather than stored.
type AttrCheck = (value: unknown) => string | null;
const integerIn = (min: number, max: number): AttrCheck => (v) => (Number.isInteger(v) && (v as number) >= min && (v as number) <= max ? null : `must be an integer from ${min} to ${max}`);
const optional = (check: AttrCheck): AttrCheck => (v) => (v === null ? null : check(v));
const shortString = (pattern: RegExp, what: string): AttrCheck => (v) => (typeof v === 'string' && pattern.test(v) ? null : `must be ${what}`);
const LANGUAGE = optional(shortString(/^[A-Za-z0-9_+#.-]{0,40}$/, 'a language name (letters, digits, _+#.-; at most 40) or null'));
const LIST_START = optional(integerIn(0, 1_000_000));
const oneOf = (...values: string[]): AttrCheck => (v) => (typeof v === 'string' && values.includes(v) ? null : `must be ${values.map((x) => `"${x}"`).join(' or ')}`);
/** A compatible hook's attachment card (services/core/webhooks/webhooks.compat.ts): a blockquote with its colour, fields as a list, a footer. */
const CARD_COLOR = optional(shortString(/^(good|warning|danger|#[0-9a-f]{3}|#[0-9a-f]{6})$/, 'good, warning, danger or a #rgb / #rrggbb colour'));
/** Attributes of each node type; a type not listed takes none. (mention and block_* nodes are checked on their own.) */
const NODE_ATTRS: Record<string, Record<string, AttrCheck>> = {
  heading: { level: integerIn(1, 6) },
  blockquote: { kind: oneOf('attachment'), color: CARD_COLOR },
  bullet_list: { kind: oneOf('fields') },
  bulletList: { kind: oneOf('fields') },
  paragraph: { kind: oneOf('footer') },
  ordered_list: { order: LIST_START, start: LIST_START },
  orderedList: { order: LIST_START, start: LIST_START },
  code_block: { language: LANGUAGE },
  codeBlock: { language: LANGUAGE },
};
const MARK_TYPES = new Set(['bold', 'strong', 'italic', 'em', 'code', 'strike', 'strikethrough', 's', 'underline', 'link', 'subscript', 'superscript']);
/** Attributes of each mark type; a type not listed takes none. `href` of a link is checked as a URL. */
const MARK_ATTRS: Record<string, Record<string, AttrCheck>> = {
  link: {
    href: () => null,
    title: optional(shortString(/^[^\u0000-\u001f]{0,200}$/s, 'a title of at most 200 characters')),
    target: optional((v) => (v === '_blank' ? null : 'must be "_blank" or null')),
    rel: optional(shortString(/^[a-z ]{0,100}$/, 'link types (lower-case words)')),
    class: (v) => (v === null ? null : 'must be null (no classes)'),
  },
};

function checkAttrs(attrs: JsonObject, known: Record<string, AttrCheck>, path: string, what: string): void {
  for (const [key, value] of Object.entries(attrs)) {
    const check = known[key];
    if (!check) fail(join(path, key), `is not an attribute of ${what}`, Object.keys(known).length ? `Use only: ${Object.keys(known).join(', ')}` : `Remove "attrs" from ${what}`);
    const problem = check(value);
    if (problem) fail(join(path, key), problem, `Fix or remove "${key}"`);
  }
}

const NODE_FIELDS = ['type', 'content', 'text', 'attrs', 'marks'];
const MARK_FIELDS = ['type', 'attrs'];
const BLOCK_ATTRS = ['blockName', 'version', 'props'];

const NODE_HINT = 'A node is {type, content?, text?, attrs?, marks?}';
const BLOCK_HINT = 'A block node is {"type": "block_<name>", "attrs": {"blockName": "<name>", "version": 1, "props": {...}}}';
const URL_HINT = `Use an https:// URL of at most ${MAX_LENGTH.url} characters`;

type JsonObject = Record<string, unknown>;

/** Thrown inside the walk to stop at the first problem. */
class Invalid extends Error {
  constructor(readonly path: string, readonly reason: string, readonly hint: string) {
    super(reason);
  }
}

function fail(path: string, reason: string, hint: string): never {
  throw new Invalid(path, reason, hint);
}

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const has = (object: JsonObject, key: string) => Object.hasOwn(object, key);

/** Paths are written from the document root, dot-separated: `content.3.attrs.props`. */
const join = (path: string, key: string | number) => (path === '' ? String(key) : `${path}.${key}`);

/** A host as compared: lower-case, one trailing dot removed. */
const normalizeHost = (host: string) => host.toLowerCase().replace(/\.$/, '');

interface WalkState {
  rules: BlockRules;
  nodeCount: number;
  mentionedUserIds: string[];
  cardOrigin: string | null;
  approvalRequests: number;
}

export function validateContentJson(doc: unknown, rules: BlockRules): ValidationResult {
  const state: WalkState = { rules, nodeCount: 0, mentionedUserIds: [], cardOrigin: null, approvalRequests: 0 };
  let copy: unknown;
  try {
    checkSize(doc);
    // The walk writes serialised URLs into a copy; the caller's value is left alone.
    copy = structuredClone(doc);
    checkDocument(copy, state);
  } catch (error) {
    if (!(error instanceof Invalid)) throw error;
    return {
      valid: false,
      error_code: 'validation_error',
      message: `${error.path || 'document'}: ${error.reason}`,
      path: error.path,
      hint: error.hint,
    };
  }
  return {
    valid: true,
    preview: previewOf(copy as PmNode),
    card_origin: state.cardOrigin,
    mentioned_user_ids: state.mentionedUserIds,
    document: copy,
  };
}

// ---- document level -------------------------------------------------------

/** Checked first, so the walk below never sees a huge or non-JSON value. */
function checkSize(doc: unknown): void {
  let json: string | undefined;
  try {
    json = JSON.stringify(doc);
  } catch {
    // Cycles, BigInt or nesting too deep for the engine.
    fail('', 'is not serializable as JSON', 'Send the document as plain JSON');
  }
  if (json === undefined) return; // not an object; checkDocument reports it
  // Each UTF-16 unit is at least one UTF-8 byte, so long strings need no encoding.
  if (json.length > MAX_BYTES || new TextEncoder().encode(json).length > MAX_BYTES) {
    fail('', `is over ${MAX_BYTES} bytes as JSON`, 'Shorten the message or split it into several messages');
  }
}

function checkDocument(doc: unknown, state: WalkState): void {
  const hint = 'The document is {"type": "doc", "content": [...]}';
  if (!isObject(doc)) fail('', 'must be an object {"type": "doc", "content": [...]}', hint);
  countNode('', 1, state);
  for (const key of Object.keys(doc)) {
    if (key !== 'type' && key !== 'content') fail(key, 'is not a field of the document', hint);
  }
  if (doc.type !== 'doc') fail('type', 'must be "doc"', hint);
  if (!Array.isArray(doc.content)) fail('content', 'must be an array of nodes', hint);
  walkChildren(doc.content, 'content', 2, state);
}

function countNode(path: string, depth: number, state: WalkState): void {
  state.nodeCount += 1;
  if (state.nodeCount > MAX_NODES) {
    fail(path, `the document has more than ${MAX_NODES} nodes`, 'Shorten the message or split it into several messages');
  }
  if (depth > MAX_DEPTH) {
    fail(path, `is nested more than ${MAX_DEPTH} levels deep`, 'Flatten the document: fewer nested lists or quotes');
  }
}

function walkChildren(children: unknown[], path: string, depth: number, state: WalkState): void {
  children.forEach((child, index) => walkNode(child, join(path, index), depth, state));
}

// ---- nodes ----------------------------------------------------------------

function walkNode(node: unknown, path: string, depth: number, state: WalkState): void {
  countNode(path, depth, state);
  if (!isObject(node)) fail(path, 'must be a node object', NODE_HINT);
  for (const key of Object.keys(node)) {
    if (!NODE_FIELDS.includes(key)) fail(join(path, key), 'is not a node field', `Remove "${key}". ${NODE_HINT}`);
  }
  const type = node.type;
  if (typeof type !== 'string') fail(join(path, 'type'), 'must be a string', NODE_HINT);

  if (type.startsWith('block_')) return checkBlock(node, type, path, state);

  if (!NODE_TYPES.has(type)) {
    fail(join(path, 'type'), `unknown node type "${type}"`,
      `Use one of: ${[...NODE_TYPES].join(', ')}, or a block node block_<name> with <name> one of: ${blockNamesFor(state.rules.agentBlocks).join(', ')}`);
  }
  if (has(node, 'attrs') && !isObject(node.attrs)) fail(join(path, 'attrs'), 'must be an object', NODE_HINT);
  if (has(node, 'attrs') && type !== 'mention') checkAttrs(node.attrs as JsonObject, NODE_ATTRS[type] ?? {}, join(path, 'attrs'), `${type} nodes`);

  if (type === 'text') {
    if (typeof node.text !== 'string' || node.text === '') {
      fail(join(path, 'text'), has(node, 'text') ? 'must be a non-empty string' : 'is required', 'A text node is {"type": "text", "text": "..."}');
    }
  } else if (has(node, 'text')) {
    fail(join(path, 'text'), 'is only allowed on text nodes', `Put the text in a child {"type": "text", "text": "..."} node`);
  }
  if (type === 'mention') checkMention(node, path, state);
  if (has(node, 'marks')) checkMarks(node.marks, join(path, 'marks'));

  if (has(node, 'content')) {
    if (LEAF_TYPES.has(type)) fail(join(path, 'content'), `is not allowed on ${type} nodes`, `Remove "content" from the ${type} node`);
    if (!Array.isArray(node.content)) fail(join(path, 'content'), 'must be an array of nodes', NODE_HINT);
    walkChildren(node.content, join(path, 'content'), depth + 1, state);
  }
}

function checkMention(node: JsonObject, path: string, state: WalkState): void {
  const result = MENTION_ATTRS_SCHEMA.safeParse(node.attrs);
  if (!result.success) {
    const [reasonPath, reason] = describeIssue(result.error.issues[0]!, join(path, 'attrs'));
    fail(reasonPath, reason, 'A mention is {"type": "mention", "attrs": {"id": "<user id (UUID)>", "label"?: "<name>"}}');
  }
  // Lower-cased so the same user written in two cases is listed once.
  const id = result.data.id.toLowerCase();
  if (!state.mentionedUserIds.includes(id)) state.mentionedUserIds.push(id);
}

function checkMarks(marks: unknown, path: string): void {
  const hint = 'Marks are [{"type": "<mark>", "attrs"?: {...}}]';
  if (!Array.isArray(marks)) fail(path, 'must be an array of marks', hint);
  marks.forEach((mark: unknown, index) => {
    const markPath = join(path, index);
    if (!isObject(mark)) fail(markPath, 'must be an object', hint);
    for (const key of Object.keys(mark)) {
      if (!MARK_FIELDS.includes(key)) fail(join(markPath, key), 'is not a mark field', hint);
    }
    if (typeof mark.type !== 'string') fail(join(markPath, 'type'), 'must be a string', hint);
    if (!MARK_TYPES.has(mark.type)) fail(join(markPath, 'type'), `unknown mark "${mark.type}"`, `Use one of: ${[...MARK_TYPES].join(', ')}`);
    if (has(mark, 'attrs') && !isObject(mark.attrs)) fail(join(markPath, 'attrs'), 'must be an object', hint);
    if (has(mark, 'attrs')) checkAttrs(mark.attrs as JsonObject, MARK_ATTRS[mark.type] ?? {}, join(markPath, 'attrs'), `${mark.type} marks`);
    // A link is a URL like any other: https only (no javascript: links in text).
    if (mark.type === 'link') {
      const href = isObject(mark.attrs) ? mark.attrs.href : undefined;
      const hrefPath = join(join(markPath, 'attrs'), 'href');
      if (typeof href !== 'string') fail(hrefPath, 'must be a string', URL_HINT);
      if (href.length > MAX_LENGTH.url) fail(hrefPath, `must be at most ${MAX_LENGTH.url} characters`, URL_HINT);
      const problem = httpsUrlProblem(href);
      if (problem) fail(hrefPath, problem, URL_HINT);
      (mark.attrs as JsonObject).href = new URL(href).href;
    }
  });
}

// ---- blocks ---------------------------------------------------------------

function checkBlock(node: JsonObject, type: string, path: string, state: WalkState): void {
  const name = type.slice('block_'.length);
  if (!isBlockName(name) || (isAgentBlock(name) && !state.rules.agentBlocks)) {
    fail(join(path, 'type'), `unknown block "${type}"`, `Use one of: ${blockNamesFor(state.rules.agentBlocks).map((n) => `block_${n}`).join(', ')}`);
  }
  if (name === 'approval_request' && ++state.approvalRequests > 1) {
    fail(join(path, 'type'), 'is a second approval request: a message asks for one approval', 'Post each approval request as its own message');
  }
  for (const key of ['content', 'text', 'marks']) {
    if (has(node, key)) fail(join(path, key), 'is not allowed on a block node', BLOCK_HINT);
  }
  const attrsPath = join(path, 'attrs');
  const attrs = node.attrs;
  if (!isObject(attrs)) fail(attrsPath, has(node, 'attrs') ? 'must be an object' : 'is required', BLOCK_HINT);
  for (const key of Object.keys(attrs)) {
    if (!BLOCK_ATTRS.includes(key)) fail(join(attrsPath, key), 'is not a block attribute', BLOCK_HINT);
  }
  if (attrs.blockName !== name) {
    fail(join(attrsPath, 'blockName'), `must be "${name}" to match type "${type}"`, `Set attrs.blockName to "${name}" or change the type`);
  }
  if (attrs.version !== 1) fail(join(attrsPath, 'version'), 'must be 1', 'Set attrs.version to 1');

  const available = state.rules.availableBlocks;
  if (available && !available.includes(name)) {
    const list = available.length > 0 ? available.join(', ') : 'none';
    fail(join(path, 'type'), `block "${name}" is not available; available blocks: ${list}`, `Use one of the available blocks: ${list}`);
  }

  const propsPath = join(attrsPath, 'props');
  const result = PROPS_SCHEMAS[name].safeParse(attrs.props);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const [issuePath, reason] = describeIssue(issue, propsPath);
    fail(issuePath, reason, propsHint(name, issuePath, state.rules));
  }
  attrs.props = result.data; // URLs serialised by the schemas
  if (isCardBlock(name)) checkCardUrl(name, (result.data as { url: string }).url, join(propsPath, 'url'), state);
}

/** The path and reason of a zod issue; an unknown key gets its own path. */
function describeIssue(issue: z.core.$ZodIssue, basePath: string): [string, string] {
  let path = issue.path.reduce<string>((at, key) => join(at, String(key)), basePath);
  if (issue.code === 'unrecognized_keys') {
    path = join(path, issue.keys[0]!);
    return [path, 'is not an allowed field'];
  }
  return [path, issue.message];
}

function propsHint(name: BlockName, issuePath: string, rules: BlockRules): string {
  const field = issuePath.split('.').at(-1);
  if (field === 'url' || field === 'actionUrl') {
    return isCardBlock(name) ? cardHint(name, rules) : URL_HINT;
  }
  if (name === 'button_group' && /\.buttons\.\d+/.test(issuePath)) return `Each button is ${BUTTON_SHAPE}`;
  return `block_${name} props are ${PROPS_SHAPES[name]}`;
}

function allowedHosts(name: keyof typeof CARD_BLOCKS, rules: BlockRules): string[] {
  return rules[CARD_BLOCKS[name]].map(normalizeHost);
}

function cardHint(name: keyof typeof CARD_BLOCKS, rules: BlockRules): string {
  const hosts = allowedHosts(name, rules);
  return hosts.length > 0
    ? `Use an https:// URL on one of: ${hosts.join(', ')}`
    : `No hosts are configured for block_${name}, so it cannot be used`;
}

/**
 * A card must point at an allowed host exactly, so that a bot key cannot make
 * a card that looks like GitHub/Linear but leads elsewhere. The URL has already
 * passed httpsUrlProblem, so it parses.
 */
function checkCardUrl(name: keyof typeof CARD_BLOCKS, value: string, path: string, state: WalkState): void {
  const url = new URL(value);
  const hint = cardHint(name, state.rules);
  if (url.username !== '' || url.password !== '') fail(path, 'must not contain user info (user@)', hint);
  // The parser drops the default port, so `:443` leaves port empty.
  if (url.port !== '') fail(path, 'must not use a port other than 443', hint);
  // hostname is already lower-case and punycode (xn--) for non-ASCII names.
  const host = normalizeHost(url.hostname);
  if (!allowedHosts(name, state.rules).includes(host)) fail(path, `host "${host}" is not allowed`, hint);
  state.cardOrigin ??= `https://${host}`;
}

// ---- preview --------------------------------------------------------------

/** A node of an already validated document. */
interface PmNode {
  type: string;
  content?: PmNode[];
  text?: string;
  attrs?: JsonObject;
}

/** Plain text of the document, whitespace collapsed, at most PREVIEW_LENGTH characters. */
function previewOf(doc: PmNode): string {
  const text = plainText(doc).replace(/\s+/g, ' ').trim();
  if (text.length <= PREVIEW_LENGTH) return text;
  let cut = text.slice(0, PREVIEW_LENGTH - 1);
  if (/[\ud800-\udbff]$/.test(cut)) cut = cut.slice(0, -1); // do not split a surrogate pair
  return `${cut.trimEnd()}…`;
}

function plainText(node: PmNode): string {
  switch (node.type) {
    case 'text':
      return node.text ?? '';
    case 'mention':
      return `@${(node.attrs?.label as string | null | undefined) || (node.attrs?.id as string)}`;
    case 'hard_break':
    case 'hardBreak':
      return '\n';
  }
  if (node.type.startsWith('block_')) {
    const props = (node.attrs?.props ?? {}) as JsonObject;
    return blockText(node.type.slice('block_'.length) as BlockName, props);
  }
  const separator = TEXTBLOCK_TYPES.has(node.type) ? '' : '\n';
  return (node.content ?? []).map(plainText).join(separator);
}

/** The words a reader sees in a block: its text, title or labels. */
function blockText(name: BlockName, props: JsonObject): string {
  const parts = (...values: unknown[]) => values.filter((v): v is string => typeof v === 'string' && v !== '').join(' ');
  switch (name) {
    case 'text':
    case 'heading':
    case 'quote':
      return parts(props.text);
    case 'callout':
      return parts(props.emoji, props.text);
    case 'alert_banner':
      return parts(props.text, props.actionLabel);
    case 'image':
      return parts(props.alt);
    case 'button_group':
      return parts(...(props.buttons as JsonObject[]).map((button) => button.label));
    case 'link_unfurl':
    case 'tracker_issue_card':
    case 'repo_pr_card':
      return parts(props.title || props.url);
    case 'divider':
    case 'feedback_buttons':
      return '';
    case 'approval_request':
      return parts(props.title, props.description);
  }
}
