// Table-driven tests of the shared content_json / block validator (shared/blocks/validate.ts).
import { expect } from 'chai';
import { BLOCK_NAMES, validateContentJson, type BlockRules } from '../../shared/blocks/index.js';

const RULES: BlockRules = { trackerHosts: ['linear.app'], codeHosts: ['github.com'] };

const USER_A = '3f1c2b9e-8a4d-4c2e-9f6a-1b2c3d4e5f60';
const USER_B = '0b7e6d5c-4a3b-4c2d-8e1f-a0b1c2d3e4f5';

// ---- document builders ------------------------------------------------------

type Json = Record<string, unknown>;

const doc = (...content: unknown[]) => ({ type: 'doc', content });
const text = (value: string, marks?: unknown[]) => (marks ? { type: 'text', text: value, marks } : { type: 'text', text: value });
const paragraph = (...content: unknown[]) => ({ type: 'paragraph', content });
const mention = (id: string, label?: string) => ({ type: 'mention', attrs: label === undefined ? { id } : { id, label } });
const block = (name: string, props: unknown) => ({ type: `block_${name}`, attrs: { blockName: name, version: 1, props } });
const buttons = (...list: unknown[]) => doc(block('button_group', { buttons: list }));
const prCard = (url: string, extra: Json = {}) => doc(block('repo_pr_card', { url, ...extra }));
const issueCard = (url: string, extra: Json = {}) => doc(block('tracker_issue_card', { url, ...extra }));

/** A document `levels` deep: the doc node, then nested blockquotes. */
function nested(levels: number) {
  let node: Json = { type: 'blockquote' };
  for (let level = levels; level > 2; level -= 1) node = { type: 'blockquote', content: [node] };
  return doc(node);
}
/** The path of the first node at `level` in a nested() document. */
const nestedPath = (level: number) => Array.from({ length: level - 1 }, () => 'content.0').join('.');

/** A document with `count` nodes in all, the doc node included. */
const manyNodes = (count: number) => doc(...Array.from({ length: count - 1 }, () => ({ type: 'horizontal_rule' })));

const P = 'content.0.attrs.props';

// ---- cases --------------------------------------------------------------------

interface ValidCase {
  name: string;
  doc: unknown;
  rules?: BlockRules;
  preview: string;
  card_origin?: string | null; // default null
  /** The document as stored when it differs from `doc` (URLs serialised). */
  stored?: unknown;
  mentioned_user_ids?: string[]; // default []
}

interface InvalidCase {
  name: string;
  doc: unknown;
  rules?: BlockRules;
  path: string;
  message?: RegExp; // checked against the message after "<path>: "
}

const validCases: ValidCase[] = [
  // Plain rich text
  { name: 'empty document', doc: doc(), preview: '' },
  { name: 'paragraph with marks', doc: doc(paragraph(text('Hello '), text('world', [{ type: 'bold' }]))), preview: 'Hello world' },
  {
    name: 'https link mark',
    doc: doc(paragraph(text('docs', [{ type: 'link', attrs: { href: 'https://example.com/docs', target: '_blank' } }]))),
    preview: 'docs',
  },
  {
    name: 'mention with label',
    doc: doc(paragraph(text('hi '), mention(USER_A, 'Ann'))),
    preview: 'hi @Ann',
    mentioned_user_ids: [USER_A],
  },
  {
    name: 'mention without label, and tiptap null label',
    doc: doc(paragraph(mention(USER_A), text(' and '), { type: 'mention', attrs: { id: USER_B, label: null } })),
    preview: `@${USER_A} and @${USER_B}`,
    mentioned_user_ids: [USER_A, USER_B],
  },
  {
    name: 'mentions are unique, lower-case, in order of appearance',
    doc: doc(paragraph(mention(USER_B, 'Bo')), paragraph(mention(USER_A.toUpperCase(), 'Ann'), mention(USER_B, 'Bo'))),
    preview: '@Bo @Ann@Bo',
    mentioned_user_ids: [USER_B, USER_A],
  },
  {
    name: 'all ProseMirror node types (snake_case)',
    doc: doc(
      { type: 'heading', attrs: { level: 2 }, content: [text('Title')] },
      { type: 'blockquote', content: [paragraph(text('quoted'))] },
      { type: 'bullet_list', content: [{ type: 'list_item', content: [paragraph(text('one'))] }] },
      { type: 'ordered_list', attrs: { order: 1 }, content: [{ type: 'list_item', content: [paragraph(text('two'))] }] },
      { type: 'code_block', attrs: { language: 'ts' }, content: [text('let x = 1;')] },
      paragraph(text('a'), { type: 'hard_break' }, text('b')),
      { type: 'horizontal_rule' },
    ),
    preview: 'Title quoted one two let x = 1; a b',
  },
  {
    name: 'all tiptap node types (camelCase)',
    doc: doc(
      { type: 'bulletList', content: [{ type: 'listItem', content: [paragraph(text('x'))] }] },
      { type: 'orderedList', content: [{ type: 'listItem', content: [paragraph(text('y'))] }] },
      { type: 'codeBlock', content: [text('z')] },
      paragraph(text('a'), { type: 'hardBreak' }, text('b')),
      { type: 'horizontalRule' },
    ),
    preview: 'x y z a b',
  },
  { name: 'paragraph without content', doc: doc({ type: 'paragraph' }), preview: '' },

  // Every block's valid form
  { name: 'block_text', doc: doc(block('text', { text: 'Build  passed' })), preview: 'Build passed' },
  { name: 'block_heading level 1', doc: doc(block('heading', { text: 'Release', level: 1 })), preview: 'Release' },
  { name: 'block_heading level 3', doc: doc(block('heading', { text: 'Notes', level: 3 })), preview: 'Notes' },
  { name: 'block_quote', doc: doc(block('quote', { text: 'Ship it' })), preview: 'Ship it' },
  { name: 'block_divider', doc: doc(paragraph(text('a')), block('divider', {}), paragraph(text('b'))), preview: 'a b' },
  { name: 'block_image with alt', doc: doc(block('image', { url: 'https://cdn.example.com/a.png', alt: 'A chart' })), preview: 'A chart' },
  { name: 'block_image without alt', doc: doc(block('image', { url: 'https://cdn.example.com/a.png' })), preview: '' },
  {
    name: 'block_link_unfurl with title and description',
    doc: doc(block('link_unfurl', { url: 'https://example.com/post', title: 'A post', description: 'About things' })),
    preview: 'A post',
  },
  { name: 'block_link_unfurl with url only', doc: doc(block('link_unfurl', { url: 'https://example.com/post' })), preview: 'https://example.com/post' },
  { name: 'block_callout with emoji', doc: doc(block('callout', { text: 'Heads up', emoji: '⚠️' })), preview: '⚠️ Heads up' },
  { name: 'block_callout without emoji', doc: doc(block('callout', { text: 'Heads up' })), preview: 'Heads up' },
  { name: 'block_alert_banner info', doc: doc(block('alert_banner', { variant: 'info', text: 'FYI' })), preview: 'FYI' },
  { name: 'block_alert_banner success', doc: doc(block('alert_banner', { variant: 'success', text: 'Done' })), preview: 'Done' },
  { name: 'block_alert_banner warning', doc: doc(block('alert_banner', { variant: 'warning', text: 'Careful' })), preview: 'Careful' },
  {
    name: 'block_alert_banner error with action',
    doc: doc(block('alert_banner', { variant: 'error', text: 'Deploy failed', actionLabel: 'View logs', actionUrl: 'https://ci.example.com/1' })),
    preview: 'Deploy failed View logs',
  },
  {
    name: 'block_button_group with url and actionId buttons and every style',
    doc: buttons(
      { label: 'Open', url: 'https://example.com', style: 'primary' },
      { label: 'Approve', actionId: 'approve', style: 'secondary' },
      { label: 'Reject', actionId: 'reject', style: 'danger' },
      { label: 'Later', actionId: 'later' },
    ),
    stored: buttons(
      { label: 'Open', url: 'https://example.com/', style: 'primary' },
      { label: 'Approve', actionId: 'approve', style: 'secondary' },
      { label: 'Reject', actionId: 'reject', style: 'danger' },
      { label: 'Later', actionId: 'later' },
    ),
    preview: 'Open Approve Reject Later',
  },
  {
    name: 'block_button_group with 10 buttons',
    doc: buttons(...Array.from({ length: 10 }, (_, i) => ({ label: `B${i}`, actionId: `a${i}` }))),
    preview: 'B0 B1 B2 B3 B4 B5 B6 B7 B8 B9',
  },
  {
    name: 'button limits exactly: label 100, actionId 100',
    doc: buttons({ label: 'l'.repeat(100), actionId: 'a'.repeat(100) }),
    preview: 'l'.repeat(100),
  },
  {
    name: 'button url of exactly 2048 characters',
    doc: buttons({ label: 'Long', url: `https://example.com/${'a'.repeat(2048 - 'https://example.com/'.length)}` }),
    preview: 'Long',
  },
  {
    name: 'block_tracker_issue_card',
    doc: issueCard('https://linear.app/acme/issue/ENG-1', { title: 'Fix login', status: 'In Progress' }),
    preview: 'Fix login',
    card_origin: 'https://linear.app',
  },
  {
    name: 'block_repo_pr_card',
    doc: prCard('https://github.com/acme/app/pull/7', { title: 'Add blocks', state: 'open' }),
    preview: 'Add blocks',
    card_origin: 'https://github.com',
  },
  {
    name: 'card host: port 443 is the default',
    doc: prCard('https://github.com:443/acme/app/pull/7'),
    stored: prCard('https://github.com/acme/app/pull/7'),
    preview: 'https://github.com/acme/app/pull/7',
    card_origin: 'https://github.com',
  },
  { name: 'card host: one trailing dot', doc: prCard('https://github.com./acme/app/pull/7', { title: 'x' }), preview: 'x', card_origin: 'https://github.com' },
  {
    name: 'card host: upper-case',
    doc: prCard('https://GitHub.COM/acme/app/pull/7', { title: 'x' }),
    stored: prCard('https://github.com/acme/app/pull/7', { title: 'x' }),
    preview: 'x',
    card_origin: 'https://github.com',
  },
  {
    name: 'card_origin is the first card in document order',
    doc: doc(
      { type: 'blockquote', content: [block('tracker_issue_card', { url: 'https://linear.app/acme/issue/ENG-2', title: 'Issue' })] },
      block('repo_pr_card', { url: 'https://github.com/acme/app/pull/8', title: 'PR' }),
    ),
    preview: 'Issue PR',
    card_origin: 'https://linear.app',
  },
  {
    name: 'availableBlocks allows the used blocks',
    doc: doc(block('text', { text: 'ok' }), block('divider', {})),
    rules: { ...RULES, availableBlocks: ['text', 'divider'] },
    preview: 'ok',
  },
  {
    name: 'blocks and text mixed',
    doc: doc(paragraph(text('Hey '), mention(USER_A, 'Ann'), text(',')), block('heading', { text: 'Status', level: 2 }), block('text', { text: 'green' })),
    preview: 'Hey @Ann, Status green',
    mentioned_user_ids: [USER_A],
  },
  { name: 'depth of exactly 20 levels', doc: nested(20), preview: '' },
  { name: 'exactly 2,000 nodes', doc: manyNodes(2000), preview: '' },
  {
    name: 'preview is cut to 280 characters',
    doc: doc(paragraph(text('word '.repeat(100)))),
    preview: `${'word '.repeat(56).slice(0, 279).trimEnd()}…`,
  },
  { name: 'just under 64 KB', doc: doc(paragraph(text('a'.repeat(65_000)))), preview: `${'a'.repeat(279)}…` },
];

const invalidCases: InvalidCase[] = [
  // Document structure
  { name: 'not an object', doc: null, path: '' },
  { name: 'array instead of a document', doc: [], path: '' },
  { name: 'root type is not doc', doc: { type: 'paragraph', content: [] }, path: 'type' },
  { name: 'root without content', doc: { type: 'doc' }, path: 'content' },
  { name: 'unknown field on the root', doc: { type: 'doc', content: [], version: 2 }, path: 'version' },
  { name: 'node is a string', doc: doc('hello'), path: 'content.0' },
  { name: 'unknown node type', doc: doc({ type: 'image', attrs: { src: 'https://x.test/a.png' } }), path: 'content.0.type', message: /unknown node type "image"/ },
  { name: 'nested doc node', doc: doc({ type: 'doc', content: [] }), path: 'content.0.type' },
  { name: 'node type missing', doc: doc({ content: [] }), path: 'content.0.type' },
  { name: 'unknown node field', doc: doc({ type: 'paragraph', html: '<b>x</b>' }), path: 'content.0.html' },
  { name: 'text node without text', doc: doc(paragraph({ type: 'text' })), path: 'content.0.content.0.text' },
  { name: 'text node with empty text', doc: doc(paragraph(text(''))), path: 'content.0.content.0.text' },
  { name: 'text on a paragraph', doc: doc({ type: 'paragraph', text: 'x' }), path: 'content.0.text' },
  { name: 'content on a text node', doc: doc(paragraph({ type: 'text', text: 'x', content: [] })), path: 'content.0.content.0.content' },
  { name: 'content is not an array', doc: doc({ type: 'paragraph', content: {} }), path: 'content.0.content' },
  { name: 'attrs is not an object', doc: doc({ type: 'heading', attrs: [2] }), path: 'content.0.attrs' },
  { name: 'marks is not an array', doc: doc(paragraph({ type: 'text', text: 'x', marks: 'bold' })), path: 'content.0.content.0.marks' },
  { name: 'unknown mark field', doc: doc(paragraph(text('x', [{ type: 'bold', style: 'x' }]))), path: 'content.0.content.0.marks.0.style' },
  { name: 'unknown mark', doc: doc(paragraph(text('x', [{ type: 'script' }]))), path: 'content.0.content.0.marks.0.type', message: /unknown mark "script"/ },
  { name: 'attribute on a mark that takes none', doc: doc(paragraph(text('x', [{ type: 'bold', attrs: { style: 'x' } }]))), path: 'content.0.content.0.marks.0.attrs.style' },
  { name: 'unknown attribute on a link mark', doc: doc(paragraph(text('x', [{ type: 'link', attrs: { href: 'https://x.test', onclick: 'y()' } }]))), path: 'content.0.content.0.marks.0.attrs.onclick' },
  { name: 'a class on a link mark', doc: doc(paragraph(text('x', [{ type: 'link', attrs: { href: 'https://x.test', class: 'admin' } }]))), path: 'content.0.content.0.marks.0.attrs.class' },
  { name: 'unknown attribute on a heading', doc: doc({ type: 'heading', attrs: { level: 2, onmouseover: 'x' }, content: [text('t')] }), path: 'content.0.attrs.onmouseover' },
  { name: 'attribute on a paragraph', doc: doc({ type: 'paragraph', attrs: { class: 'x' }, content: [text('t')] }), path: 'content.0.attrs.class' },
  { name: 'a card colour that is not a colour', doc: doc({ type: 'blockquote', attrs: { kind: 'attachment', color: 'red;background:url(x)' }, content: [paragraph(text('t'))] }), path: 'content.0.attrs.color' },
  { name: 'heading level out of range', doc: doc({ type: 'heading', attrs: { level: 9 }, content: [text('t')] }), path: 'content.0.attrs.level' },
  { name: 'code language breaking out of a class', doc: doc({ type: 'code_block', attrs: { language: 'ts" onmouseover="x' }, content: [text('t')] }), path: 'content.0.attrs.language' },
  { name: 'attribute on a text node', doc: doc(paragraph({ type: 'text', text: 'x', attrs: { title: 'y' } })), path: 'content.0.content.0.attrs.title' },
  { name: 'mark without type', doc: doc(paragraph(text('x', [{ attrs: {} }]))), path: 'content.0.content.0.marks.0.type' },
  {
    name: 'javascript: link mark',
    doc: doc(paragraph(text('x', [{ type: 'link', attrs: { href: 'javascript:alert(1)' } }]))),
    path: 'content.0.content.0.marks.0.attrs.href',
    message: /must start with https:\/\//,
  },
  { name: 'http: link mark', doc: doc(paragraph(text('x', [{ type: 'bold' }, { type: 'link', attrs: { href: 'http://x.test' } }]))), path: 'content.0.content.0.marks.1.attrs.href' },

  // Mentions
  { name: 'bad mention id', doc: doc(paragraph(mention('not-a-uuid'))), path: 'content.0.content.0.attrs.id', message: /UUID/ },
  { name: 'mention without attrs', doc: doc(paragraph({ type: 'mention' })), path: 'content.0.content.0.attrs' },
  { name: 'mention id is a number', doc: doc(paragraph({ type: 'mention', attrs: { id: 42 } })), path: 'content.0.content.0.attrs.id' },
  { name: 'unknown mention attr', doc: doc(paragraph({ type: 'mention', attrs: { id: USER_A, role: 'admin' } })), path: 'content.0.content.0.attrs.role' },

  // Block node shape
  { name: 'unknown block', doc: doc(block('table', { rows: [] })), path: 'content.0.type', message: /unknown block "block_table"/ },
  { name: 'version 2', doc: doc({ type: 'block_text', attrs: { blockName: 'text', version: 2, props: { text: 'x' } } }), path: 'content.0.attrs.version' },
  { name: 'version missing', doc: doc({ type: 'block_text', attrs: { blockName: 'text', props: { text: 'x' } } }), path: 'content.0.attrs.version' },
  { name: 'blockName mismatch', doc: doc({ type: 'block_text', attrs: { blockName: 'heading', version: 1, props: { text: 'x' } } }), path: 'content.0.attrs.blockName' },
  { name: 'block without attrs', doc: doc({ type: 'block_divider' }), path: 'content.0.attrs' },
  { name: 'block with content', doc: doc({ ...block('divider', {}), content: [] }), path: 'content.0.content' },
  { name: 'unknown block attribute', doc: doc({ type: 'block_divider', attrs: { blockName: 'divider', version: 1, props: {}, id: 'x' } }), path: 'content.0.attrs.id' },
  { name: 'props missing', doc: doc({ type: 'block_divider', attrs: { blockName: 'divider', version: 1 } }), path: P, message: /is required/ },
  { name: 'props is an array', doc: doc(block('divider', [])), path: P },
  {
    name: 'availableBlocks excludes the block',
    doc: doc(block('text', { text: 'ok' }), block('button_group', { buttons: [{ label: 'x', actionId: 'y' }] })),
    rules: { ...RULES, availableBlocks: ['text', 'divider'] },
    path: 'content.1.type',
    message: /available blocks: text, divider/,
  },

  // Props of each block
  { name: 'text: text missing', doc: doc(block('text', {})), path: `${P}.text`, message: /is required/ },
  { name: 'text: unknown prop', doc: doc(block('text', { text: 'x', bold: true })), path: `${P}.bold` },
  { name: 'text: over 4000 characters', doc: doc(block('text', { text: 'x'.repeat(4001) })), path: `${P}.text`, message: /at most 4000/ },
  { name: 'text: empty', doc: doc(block('text', { text: '' })), path: `${P}.text` },
  { name: 'heading: level 4', doc: doc(block('heading', { text: 'x', level: 4 })), path: `${P}.level` },
  { name: 'heading: level 0', doc: doc(block('heading', { text: 'x', level: 0 })), path: `${P}.level` },
  { name: 'heading: level 1.5', doc: doc(block('heading', { text: 'x', level: 1.5 })), path: `${P}.level` },
  { name: 'heading: level as string', doc: doc(block('heading', { text: 'x', level: '2' })), path: `${P}.level` },
  { name: 'heading: level missing', doc: doc(block('heading', { text: 'x' })), path: `${P}.level` },
  { name: 'quote: text not a string', doc: doc(block('quote', { text: 5 })), path: `${P}.text`, message: /must be a string/ },
  { name: 'divider: any prop', doc: doc(block('divider', { thick: true })), path: `${P}.thick` },
  { name: 'image: http url', doc: doc(block('image', { url: 'http://cdn.example.com/a.png' })), path: `${P}.url`, message: /must start with https:\/\// },
  { name: 'image: data: url', doc: doc(block('image', { url: 'data:image/png;base64,AAAA' })), path: `${P}.url` },
  { name: 'image: url missing', doc: doc(block('image', { alt: 'x' })), path: `${P}.url` },
  { name: 'image: alt over 1000', doc: doc(block('image', { url: 'https://cdn.example.com/a.png', alt: 'x'.repeat(1001) })), path: `${P}.alt` },
  { name: 'link_unfurl: ftp url', doc: doc(block('link_unfurl', { url: 'ftp://example.com/x' })), path: `${P}.url` },
  { name: 'link_unfurl: relative url', doc: doc(block('link_unfurl', { url: '/posts/1' })), path: `${P}.url` },
  { name: 'link_unfurl: https:// that does not parse', doc: doc(block('link_unfurl', { url: 'https://' })), path: `${P}.url`, message: /not a valid URL/ },
  { name: 'link_unfurl: upper-case scheme', doc: doc(block('link_unfurl', { url: 'HTTPS://example.com' })), path: `${P}.url` },
  { name: 'link_unfurl: url with a space', doc: doc(block('link_unfurl', { url: 'https://example.com/a b' })), path: `${P}.url` },
  { name: 'link_unfurl: title over 300', doc: doc(block('link_unfurl', { url: 'https://example.com', title: 't'.repeat(301) })), path: `${P}.title` },
  { name: 'callout: emoji over 32', doc: doc(block('callout', { text: 'x', emoji: 'e'.repeat(33) })), path: `${P}.emoji` },
  { name: 'alert_banner: bad variant', doc: doc(block('alert_banner', { variant: 'danger', text: 'x' })), path: `${P}.variant`, message: /info, success, warning, error/ },
  { name: 'alert_banner: text missing', doc: doc(block('alert_banner', { variant: 'info' })), path: `${P}.text` },
  {
    name: 'alert_banner: actionLabel without actionUrl',
    doc: doc(block('alert_banner', { variant: 'error', text: 'x', actionLabel: 'Retry' })),
    path: `${P}.actionUrl`,
    message: /required when actionLabel/,
  },
  { name: 'alert_banner: actionUrl without actionLabel', doc: doc(block('alert_banner', { variant: 'error', text: 'x', actionUrl: 'https://x.test' })), path: `${P}.actionLabel` },
  { name: 'alert_banner: http actionUrl', doc: doc(block('alert_banner', { variant: 'info', text: 'x', actionLabel: 'Go', actionUrl: 'http://x.test' })), path: `${P}.actionUrl` },

  // Buttons
  { name: 'button_group: 0 buttons', doc: buttons(), path: `${P}.buttons`, message: /at least 1/ },
  { name: 'button_group: 11 buttons', doc: buttons(...Array.from({ length: 11 }, (_, i) => ({ label: `B${i}`, actionId: `a${i}` }))), path: `${P}.buttons`, message: /at most 10/ },
  { name: 'button_group: buttons missing', doc: doc(block('button_group', {})), path: `${P}.buttons` },
  { name: 'button: both url and actionId', doc: buttons({ label: 'x', url: 'https://x.test', actionId: 'y' }), path: `${P}.buttons.0`, message: /exactly one of url or actionId/ },
  { name: 'button: neither url nor actionId', doc: buttons({ label: 'ok', actionId: 'a' }, { label: 'x' }), path: `${P}.buttons.1`, message: /exactly one of url or actionId/ },
  { name: 'button: http url', doc: buttons({ label: 'a', actionId: 'a' }, { label: 'x', url: 'http://x.test' }), path: `${P}.buttons.1.url`, message: /must start with https:\/\// },
  { name: 'button: javascript: url', doc: buttons({ label: 'x', url: 'javascript:alert(1)' }), path: `${P}.buttons.0.url` },
  { name: 'button: url of 2049 characters', doc: buttons({ label: 'x', url: `https://example.com/${'a'.repeat(2049 - 'https://example.com/'.length)}` }), path: `${P}.buttons.0.url`, message: /at most 2048/ },
  { name: 'button: label of 101 characters', doc: buttons({ label: 'l'.repeat(101), actionId: 'a' }), path: `${P}.buttons.0.label`, message: /at most 100/ },
  { name: 'button: empty label', doc: buttons({ label: '', actionId: 'a' }), path: `${P}.buttons.0.label` },
  { name: 'button: label missing', doc: buttons({ actionId: 'a' }), path: `${P}.buttons.0.label` },
  { name: 'button: label not a string', doc: buttons({ label: 7, actionId: 'a' }), path: `${P}.buttons.0.label` },
  { name: 'button: actionId of 101 characters', doc: buttons({ label: 'x', actionId: 'a'.repeat(101) }), path: `${P}.buttons.0.actionId`, message: /at most 100/ },
  { name: 'button: empty actionId', doc: buttons({ label: 'x', actionId: '' }), path: `${P}.buttons.0.actionId` },
  { name: 'button: bad style', doc: buttons({ label: 'x', actionId: 'a', style: 'link' }), path: `${P}.buttons.0.style`, message: /primary, secondary, danger/ },
  { name: 'button: unknown field', doc: buttons({ label: 'x', actionId: 'a', onClick: 'alert(1)' }), path: `${P}.buttons.0.onClick` },
  { name: 'button: not an object', doc: buttons('Click'), path: `${P}.buttons.0` },

  // Card hosts
  { name: 'card: user-info', doc: prCard('https://user@github.com/acme/app/pull/7'), path: `${P}.url`, message: /user info/ },
  { name: 'card: user and password', doc: prCard('https://github.com:pw@evil.test/acme'), path: `${P}.url` },
  { name: 'card: port 444', doc: prCard('https://github.com:444/acme/app/pull/7'), path: `${P}.url`, message: /port/ },
  { name: 'card: look-alike github.com.evil.test', doc: prCard('https://github.com.evil.test/acme/app/pull/7'), path: `${P}.url`, message: /not allowed/ },
  { name: 'card: look-alike evilgithub.com', doc: prCard('https://evilgithub.com/acme/app/pull/7'), path: `${P}.url` },
  { name: 'card: sub-domain api.github.com', doc: prCard('https://api.github.com/repos/acme/app/pulls/7'), path: `${P}.url` },
  { name: 'card: http', doc: prCard('http://github.com/acme/app/pull/7'), path: `${P}.url`, message: /must start with https:\/\// },
  { name: 'card: IDN look-alike (accented i)', doc: prCard('https://gíthub.com/acme/app/pull/7'), path: `${P}.url` },
  { name: 'card: IDN look-alike (Cyrillic i)', doc: prCard('https://gіthub.com/acme/app/pull/7'), path: `${P}.url` },
  { name: 'card: punycode host', doc: prCard('https://xn--gthub-2sa.com/acme/app/pull/7'), path: `${P}.url` },
  { name: 'card: two trailing dots', doc: prCard('https://github.com../acme'), path: `${P}.url` },
  { name: 'card: backslash trick', doc: prCard('https://github.com\\@evil.test/'), path: `${P}.url` },
  { name: 'card: tab inside the host', doc: prCard('https://git\thub.com/acme'), path: `${P}.url` },
  { name: 'card: host of the other kind', doc: issueCard('https://github.com/acme/app/issues/1'), path: `${P}.url`, message: /host "github.com" is not allowed/ },
  { name: 'card: tracker host on a PR card', doc: prCard('https://linear.app/acme/issue/ENG-1'), path: `${P}.url` },
  { name: 'card: no hosts configured', doc: issueCard('https://linear.app/acme/issue/ENG-1'), rules: { trackerHosts: [], codeHosts: [] }, path: `${P}.url` },
  { name: 'card: unknown prop', doc: prCard('https://github.com/acme/app/pull/7', { author: 'x' }), path: `${P}.author` },
  { name: 'card: status over 50', doc: issueCard('https://linear.app/acme/issue/ENG-1', { status: 's'.repeat(51) }), path: `${P}.status` },

  // Limits
  { name: 'depth of 21 levels', doc: nested(21), path: nestedPath(21), message: /more than 20 levels/ },
  { name: '2,001 nodes', doc: manyNodes(2001), path: 'content.1999', message: /more than 2000 nodes/ },
  { name: 'over 64 KB', doc: doc(paragraph(text('a'.repeat(65_536)))), path: '', message: /65536 bytes/ },
  { name: 'over 64 KB in UTF-8 bytes, under in characters', doc: doc(paragraph(text('é'.repeat(33_000)))), path: '' },
  {
    name: 'cyclic document',
    doc: (() => {
      const node: Json = { type: 'paragraph', content: [] };
      (node.content as unknown[]).push(node);
      return doc(node);
    })(),
    path: '',
  },

  // First error wins, depth-first in document order
  {
    name: 'first error in document order is reported',
    doc: doc(paragraph(text('ok'), mention('bad')), block('image', { url: 'http://x.test' })),
    path: 'content.0.content.1.attrs.id',
  },
];

// ---- runner -------------------------------------------------------------------

describe('shared/blocks validateContentJson', () => {
  it('exports the 11 stable block names', () => {
    expect(BLOCK_NAMES).to.deep.equal([
      'text', 'heading', 'quote', 'divider', 'image', 'link_unfurl', 'callout',
      'alert_banner', 'button_group', 'tracker_issue_card', 'repo_pr_card',
    ]);
  });

  it('has at least 70 table cases', () => {
    expect(validCases.length + invalidCases.length).to.be.at.least(70);
  });

  describe('valid documents', () => {
    for (const c of validCases) {
      it(c.name, () => {
        const result = validateContentJson(c.doc, c.rules ?? RULES);
        const { document, ...answer } = result as typeof result & { document?: unknown };
        expect(answer, JSON.stringify(answer)).to.deep.equal({
          valid: true,
          preview: c.preview,
          card_origin: c.card_origin ?? null,
          mentioned_user_ids: c.mentioned_user_ids ?? [],
        });
        // The document to store: the one sent, URLs serialised as parsed.
        expect(document).to.deep.equal(c.stored ?? c.doc);
        expect(result.valid && result.preview.length).to.be.at.most(280);
      });
    }
  });

  describe('invalid documents', () => {
    for (const c of invalidCases) {
      it(c.name, () => {
        const result = validateContentJson(c.doc, c.rules ?? RULES);
        if (result.valid) expect.fail(`expected invalid, got ${JSON.stringify(result)}`);
        expect(result.error_code).to.equal('validation_error');
        expect(result.path, result.message).to.equal(c.path);
        const prefix = `${c.path || 'document'}: `;
        expect(result.message.startsWith(prefix), result.message).to.equal(true);
        if (c.message) expect(result.message.slice(prefix.length)).to.match(c.message);
        expect(result.hint).to.be.a('string').and.not.equal('');
      });
    }
  });

  it('gives a card URL error a hint naming the allowed hosts', () => {
    const result = validateContentJson(prCard('https://evil.test/x'), RULES);
    expect(result).to.include({ valid: false, hint: 'Use an https:// URL on one of: github.com' });
  });

  it('writes the button URL message as path: reason', () => {
    const result = validateContentJson(
      doc(paragraph(text('a')), paragraph(text('b')), paragraph(text('c')), block('button_group', { buttons: [{ label: 'a', actionId: 'a' }, { label: 'b', url: 'http://x.test' }] })),
      RULES,
    );
    expect(result).to.include({ valid: false, message: 'content.3.attrs.props.buttons.1.url: must start with https://' });
  });

  it('names the available blocks in the message and hint', () => {
    const result = validateContentJson(doc(block('image', { url: 'https://x.test/a.png' })), { ...RULES, availableBlocks: ['text'] });
    expect(result).to.include({ valid: false, message: 'content.0.type: block "image" is not available; available blocks: text' });
  });
});
