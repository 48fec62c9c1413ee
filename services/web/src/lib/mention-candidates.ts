// What the composer's `@` offers: people, and at level 3 (docs/team-chat.md)
// `@here`, `@channel` and user group handles. A group or a special mention is
// inserted as text (`@backend `): the server reads written mentions from the
// content itself, so they need no node of the document.
import type { UserGroup } from './team-chat.js';
import type { User } from './types.js';

export type MentionCandidate =
  | { kind: 'user'; key: string; user: User; insert: string; label: string; hint: string }
  | { kind: 'group'; key: string; insert: string; label: string; hint: string };

/** The special mentions, as the server reads them. */
const SPECIAL = [
  { handle: 'here', hint: 'Notify everyone here who is online' },
  { handle: 'channel', hint: 'Notify every member of this conversation' },
];

const label = (u: User) => u.display_name || u.name;

/** At most `limit` candidates for what follows `@`: people first, then the special mentions and groups. */
export function mentionCandidates(query: string, users: Iterable<User>, groups: Iterable<UserGroup> | null, limit = 6): MentionCandidate[] {
  const q = query.toLowerCase();
  const people: MentionCandidate[] = [...users]
    .filter((u) => u.name.toLowerCase().startsWith(q) || label(u).toLowerCase().startsWith(q))
    .map((u) => ({ kind: 'user', key: `u:${u.id}`, user: u, insert: u.name, label: label(u), hint: `@${u.name}` }));
  const teams: MentionCandidate[] = groups
    ? [
        ...SPECIAL.filter((s) => s.handle.startsWith(q)).map((s) => ({ kind: 'group' as const, key: `s:${s.handle}`, insert: s.handle, label: `@${s.handle}`, hint: s.hint })),
        ...[...groups]
          .filter((g) => g.handle.startsWith(q) || g.name.toLowerCase().startsWith(q))
          .map((g) => ({ kind: 'group' as const, key: `g:${g.id}`, insert: g.handle, label: `@${g.handle}`, hint: `${g.name}, ${g.member_ids.length} ${g.member_ids.length === 1 ? 'member' : 'members'}` })),
      ]
    : [];
  // An exact group or special match (`@here`) is not pushed out by a crowd of people.
  const room = Math.max(limit - teams.length, Math.min(people.length, Math.ceil(limit / 2)));
  return [...people.slice(0, room), ...teams].slice(0, limit);
}
