// Mentions in the composer's text: `@name` of a known person becomes a
// mention node (content_json), so the server records who was mentioned. The
// rest of the message keeps its markdown: the text is parsed by the same
// markdown-it as the renderer's (lib/markdown.ts) and its tokens become the
// document's nodes and marks, so bold, code, lists and line breaks look the
// same as in a message without a mention.
import { md } from './markdown.js';
import type { DocNode, User } from './types.js';

type Token = ReturnType<typeof md.parse>[number];

type Mark = NonNullable<DocNode['marks']>[number];

const label = (u: User) => u.display_name || u.name;
const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** `@name` standing alone: after a space or the start, not followed by more of a name (`@bob.` is bob; `@bob.smith` is not). */
const mentionPattern = (name: string) => `(?<=^|\\s)@${escapeRegExp(name)}(?![\\w-]|\\.\\w)`;

/** Block tokens that open a node of the document, and the node they open. */
const BLOCKS: Record<string, (t: Token) => DocNode> = {
  paragraph_open: () => ({ type: 'paragraph', content: [] }),
  heading_open: (t) => ({ type: 'heading', attrs: { level: Number(t.tag.slice(1)) || 1 }, content: [] }),
  blockquote_open: () => ({ type: 'blockquote', content: [] }),
  bullet_list_open: () => ({ type: 'bullet_list', content: [] }),
  ordered_list_open: (t) => ({ type: 'ordered_list', attrs: { order: Number(t.attrGet('start') ?? 1) }, content: [] }),
  list_item_open: () => ({ type: 'list_item', content: [] }),
};
const INLINE_MARKS: Record<string, Mark['type']> = { strong_open: 'bold', em_open: 'italic', s_open: 'strike' };

/** Text with the chosen `@name`s turned into mention nodes, and its markdown into nodes and marks (content_json). */
export function mentionDoc(text: string, mentions: User[]): DocNode | null {
  if (!mentions.length) return null;
  const byName = new Map(mentions.map((u) => [u.name, u]));
  // Longest names first, so `@bobby` is not read as `@bob` + "by".
  const names = [...byName.keys()].sort((a, b) => b.length - a.length);
  const splitter = new RegExp(`(${names.map(mentionPattern).join('|')})`, 'g');

  const doc: DocNode = { type: 'doc', content: [] };
  const stack: DocNode[] = [doc];
  const top = () => stack.at(-1)!;
  const add = (node: DocNode) => (top().content ??= []).push(node);

  const inline = (children: Token[]) => {
    // The marks open at this point; null stands for a link the server would refuse (its text stays, unlinked).
    const marks: (Mark | null)[] = [];
    const text = (value: string, extra: Mark[] = []) => {
      if (!value) return;
      const all = [...marks.filter((m): m is Mark => m !== null), ...extra];
      add({ type: 'text', text: value, ...(all.length ? { marks: all.map((m) => ({ ...m })) } : {}) });
    };
    const close = (test: (m: Mark | null) => boolean) => {
      const at = marks.findLastIndex(test);
      if (at >= 0) marks.splice(at, 1);
    };
    for (const t of children) {
      const kind = INLINE_MARKS[t.type];
      const closes = INLINE_MARKS[t.type.replace(/_close$/, '_open')];
      if (t.type === 'text') {
        // Mentions only in plain text, never in code.
        for (const part of t.content.split(splitter)) {
          const user = part.startsWith('@') ? byName.get(part.slice(1)) : undefined;
          if (user) add({ type: 'mention', attrs: { id: user.id, label: label(user) } });
          else text(part);
        }
      } else if (t.type === 'code_inline') text(t.content, [{ type: 'code' }]);
      else if (t.type === 'softbreak' || t.type === 'hardbreak') add({ type: 'hard_break' });
      else if (kind) marks.push({ type: kind });
      else if (closes && t.nesting === -1) close((m) => m?.type === closes);
      else if (t.type === 'link_open') {
        // Only what the server stores as a link (an https:// address).
        const href = String(t.attrGet('href') ?? '');
        marks.push(/^https:\/\/[^\s\\]+$/.test(href) ? { type: 'link', attrs: { href } } : null);
      } else if (t.type === 'link_close') close((m) => m === null || m.type === 'link');
      else if (t.type === 'image') text(t.content || String(t.attrGet('src') ?? ''));
      else if (t.content) text(t.content);
    }
  };

  for (const t of md.parse(text, {})) {
    const open = BLOCKS[t.type];
    if (open) {
      const node = open(t);
      add(node);
      stack.push(node);
    } else if (t.nesting === -1 && BLOCKS[t.type.replace(/_close$/, '_open')]) stack.pop();
    else if (t.type === 'inline') {
      // Inline text outside a paragraph or heading (a table's cell): a paragraph of its own.
      const own = top().type !== 'paragraph' && top().type !== 'heading';
      if (own) {
        const p: DocNode = { type: 'paragraph', content: [] };
        add(p);
        stack.push(p);
      }
      inline(t.children ?? []);
      if (own) stack.pop();
    } else if (t.type === 'fence' || t.type === 'code_block') {
      const code = t.content.replace(/\n$/, '');
      const language = t.info.trim().split(/\s+/)[0] ?? '';
      add({ type: 'code_block', ...(language && /^[A-Za-z0-9_+#.-]{1,40}$/.test(language) ? { attrs: { language } } : {}), content: code ? [{ type: 'text', text: code }] : [] });
    } else if (t.type === 'hr') add({ type: 'horizontal_rule' });
  }
  return doc;
}

/** The people named as `@name` in the text (a draft restored after a reload keeps its mentions). */
export function mentionedIn(text: string, users: Iterable<User>): User[] {
  const found = new Map<string, User>();
  for (const u of users) if (new RegExp(mentionPattern(u.name)).test(text)) found.set(u.id, u);
  return [...found.values()];
}
