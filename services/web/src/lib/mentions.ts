// Mentions in the composer's text: `@name` of a known person becomes a
// mention node (content_json), so the server records who was mentioned.
import type { DocNode, User } from './types.js';

const label = (u: User) => u.display_name || u.name;

/** Text with the chosen `@name`s turned into mention nodes (content_json). */
export function mentionDoc(text: string, mentions: User[]): DocNode | null {
  if (!mentions.length) return null;
  const inline: DocNode[] = [];
  let rest = text;
  while (rest) {
    let best: { at: number; user: User } | null = null;
    for (const u of mentions) {
      const at = rest.indexOf(`@${u.name}`);
      if (at >= 0 && (!best || at < best.at || (at === best.at && u.name.length > best.user.name.length))) best = { at, user: u };
    }
    if (!best) {
      inline.push({ type: 'text', text: rest });
      break;
    }
    if (best.at > 0) inline.push({ type: 'text', text: rest.slice(0, best.at) });
    inline.push({ type: 'mention', attrs: { id: best.user.id, label: label(best.user) } });
    rest = rest.slice(best.at + best.user.name.length + 1);
  }
  return { type: 'doc', content: [{ type: 'paragraph', content: inline }] };
}

/** The people named as `@name` in the text (a draft restored after a reload keeps its mentions). */
export function mentionedIn(text: string, users: Iterable<User>): User[] {
  const found = new Map<string, User>();
  for (const u of users) if (new RegExp(`(^|\\s)@${u.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w-]|\\.\\w)`).test(text)) found.set(u.id, u);
  return [...found.values()];
}

