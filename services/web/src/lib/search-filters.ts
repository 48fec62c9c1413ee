// Search filters, as Slack writes them: `from:@name`, `in:#channel` (or
// `in:@name` for a direct message), `before:YYYY-MM-DD`, `after:YYYY-MM-DD`
// and `has:file`, mixed with the words. Framework-free: parsed here, mapped
// to GET /search/messages's parameters (author_id, channel_id, before, after,
// has), and the suggestion shown while one types a filter's value.

export interface FilterPeople {
  /** Users by id, with their handle (`name`). */
  users: Iterable<{ id: string; name: string; display_name?: string | null }>;
  /** Channels by id, with their name. */
  channels: Iterable<{ id: string; name: string }>;
  /** 1:1 conversations: the id and the other person's id. */
  dms: Iterable<{ id: string; otherId: string }>;
}

export interface ParsedSearch {
  /** The words, phrases and exclusions left once the filters are taken out. */
  text: string;
  /** The API's query parameters the filters map to. */
  params: Record<string, string>;
  /** What could not be understood, in plain words ("No one is called @zed"). */
  problems: string[];
}

const FILTER = /(?:^|\s)(from|in|before|after|has):(\S*)/gi;
const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A local calendar day (YYYY-MM-DD) as the time its day starts, else null. */
function dayStart(value: string): Date | null {
  const m = DAY.exec(value);
  if (!m) return null;
  const d = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return d.getMonth() === Number(m[2]) - 1 ? d : null;
}

const strip = (value: string, sigil: string) => (value.startsWith(sigil) ? value.slice(1) : value).toLowerCase();

/** Splits a query into its words and its filters, mapped to the API's parameters. */
export function parseSearch(query: string, known: FilterPeople): ParsedSearch {
  const params: Record<string, string> = {};
  const problems: string[] = [];
  const users = [...known.users];
  for (const m of query.matchAll(FILTER)) {
    const kind = m[1]!.toLowerCase();
    const value = m[2]!;
    if (!value) continue;
    if (kind === 'from') {
      const user = users.find((u) => u.name.toLowerCase() === strip(value, '@'));
      if (user) params.author_id = user.id;
      else problems.push(`No one is called @${strip(value, '@')}.`);
    } else if (kind === 'in') {
      const id = value.startsWith('@')
        ? [...known.dms].find((d) => users.find((u) => u.id === d.otherId)?.name.toLowerCase() === strip(value, '@'))?.id
        : [...known.channels].find((c) => c.name.toLowerCase() === strip(value, '#'))?.id;
      if (id) params.channel_id = id;
      else problems.push(`No conversation is called ${value}.`);
    } else if (kind === 'before' || kind === 'after') {
      const start = dayStart(value);
      if (!start) problems.push(`${kind}: takes a day, such as ${kind}:2026-01-31.`);
      // Both bounds are exclusive: before the day starts, after it ends.
      else params[kind] = (kind === 'before' ? start : new Date(start.getFullYear(), start.getMonth(), start.getDate() + 1, 0, 0, 0, -1)).toISOString();
    } else if (kind === 'has') {
      if (value.toLowerCase() === 'file') params.has = 'file';
      else problems.push('has: takes file (has:file).');
    }
  }
  const text = query.replace(FILTER, ' ').replace(/\s+/g, ' ').trim();
  return { text, params, problems };
}

export interface Suggestion {
  /** What replaces the filter being typed (`from:@alice `). */
  insert: string;
  /** What the list shows. */
  label: string;
}

/**
 * The suggestions for the filter being typed just before the caret: people
 * after `from:`, conversations after `in:`, `has:file` after `has:`, the
 * filters themselves for a word that begins one. `start` is where the
 * filter begins (what a pick replaces up to the caret).
 */
export function suggestionsAt(query: string, caret: number, known: FilterPeople, limit = 8): { start: number; items: Suggestion[] } | null {
  const before = query.slice(0, caret);
  const m = /(?:^|\s)(from|in|has):(\S*)$/i.exec(before);
  const users = [...known.users];
  if (m) {
    const start = before.length - m[1]!.length - 1 - m[2]!.length;
    const kind = m[1]!.toLowerCase();
    const typed = m[2]!.replace(/^[@#]/, '').toLowerCase();
    const matches = (...names: (string | null | undefined)[]) => names.some((n) => n?.toLowerCase().includes(typed));
    let items: Suggestion[] = [];
    if (kind === 'from') {
      items = users.filter((u) => matches(u.name, u.display_name)).map((u) => ({ insert: `from:@${u.name} `, label: u.display_name ? `${u.display_name} (@${u.name})` : `@${u.name}` }));
    } else if (kind === 'in') {
      items = [
        ...[...known.channels].filter((c) => matches(c.name)).map((c) => ({ insert: `in:#${c.name} `, label: `#${c.name}` })),
        ...[...known.dms].flatMap((d) => {
          const u = users.find((x) => x.id === d.otherId);
          return u && matches(u.name, u.display_name) ? [{ insert: `in:@${u.name} `, label: `Direct messages with ${u.display_name || `@${u.name}`}` }] : [];
        }),
      ];
    } else if ('file'.startsWith(typed)) {
      items = [{ insert: 'has:file ', label: 'has:file (messages with a file)' }];
    }
    // What is typed already in full needs no suggestion.
    const typedWhole = `${kind}:${m[2]!}`.toLowerCase();
    return { start, items: items.filter((i) => i.insert.trim().toLowerCase() !== typedWhole).slice(0, limit) };
  }
  const word = /(?:^|\s)([a-z]{1,5})$/i.exec(before);
  if (!word) return null;
  const typed = word[1]!.toLowerCase();
  const filters: Suggestion[] = [
    { insert: 'from:', label: 'from: a person' },
    { insert: 'in:', label: 'in: a channel or conversation' },
    { insert: 'before:', label: 'before: a day (YYYY-MM-DD)' },
    { insert: 'after:', label: 'after: a day (YYYY-MM-DD)' },
    { insert: 'has:file ', label: 'has:file (messages with a file)' },
  ].filter((f) => f.insert.startsWith(typed) && f.insert !== typed);
  return filters.length ? { start: before.length - typed.length, items: filters } : null;
}
