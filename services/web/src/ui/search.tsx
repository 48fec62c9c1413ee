// Message search (feature level 3, contract §9: GET /search/messages with the
// web-search syntax: words, "phrases", -excluded). Results show their
// conversation and author with the matched words marked; a click opens the
// conversation and highlights the message. Absent below level 3. Filters
// (`from:`, `in:`, `before:`, `after:`, `has:file`) are suggested while typed
// and map to the API's parameters (lib/search-filters.ts).
import { useRef, useState } from 'preact/hooks';
import { ApiError, errorMessage } from '../lib/api.js';
import { searchTerms } from '../lib/search.js';
import { parseSearch, suggestionsAt, type FilterPeople } from '../lib/search-filters.js';
import type { Message } from '../lib/types.js';
import { conversationTitle, displayName, useStore } from './context.js';
import { Icon } from './icons.js';
import { plainText } from './markdown.js';

function Highlighted({ text, terms }: { text: string; terms: string[] }) {
  if (!terms.length) return <>{text}</>;
  const pattern = new RegExp(`(${terms.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})`, 'gi');
  return <>{text.split(pattern).map((part, i) => (i % 2 ? <mark key={i}>{part}</mark> : part))}</>;
}

/** What the filters can name: people, channels, and 1:1 conversations by the other person. */
function filterPeople(client: ReturnType<typeof useStore>): FilterPeople {
  const s = client.store;
  return {
    users: s.users.values(),
    channels: s.channels.values(),
    dms: [...s.dms.values()].filter((d) => d.kind === 'dm').flatMap((d) => {
      const other = d.member_ids.find((u) => u !== s.me?.id);
      return other ? [{ id: d.id, otherId: other }] : [];
    }),
  };
}

/**
 * The search box (a searchbox that owns a listbox, focus staying in it, as the switcher's combobox does): typing `from:` offers
 * people, `in:` conversations, `has:` file, the start of a filter's name the
 * filters (focus stays in the box; ↑/↓ move, Enter or Tab picks, Escape
 * closes the list). Enter with no suggestion picked searches.
 */
export function SearchBox({ onResults }: { onResults(q: string): void }) {
  const client = useStore();
  const [q, setQ] = useState('');
  const [caret, setCaret] = useState(0);
  const [active, setActive] = useState(-1);
  const [closed, setClosed] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  if (!client.store.features.search) return null;
  const found = closed ? null : suggestionsAt(q, caret, filterPeople(client));
  const items = found?.items ?? [];
  const pick = (i: number) => {
    const item = items[i];
    if (!item || !found) return;
    const next = q.slice(0, found.start) + item.insert + q.slice(caret).replace(/^\S*\s?/, '');
    const at = found.start + item.insert.length;
    setQ(next);
    setCaret(at);
    setActive(-1);
    requestAnimationFrame(() => input.current?.setSelectionRange(at, at));
  };
  const track = (el: HTMLInputElement) => (setQ(el.value), setCaret(el.selectionStart ?? el.value.length), setClosed(false));
  return (
    <form role="search" class="search-form" onSubmit={(e) => (e.preventDefault(), q.trim() && (setClosed(true), onResults(q.trim())))}>
      <input
        ref={input}
        type="search"
        aria-label="Search messages"
        aria-autocomplete="list"
        aria-controls={items.length ? 'search-suggestions' : undefined}
        aria-activedescendant={active >= 0 && items.length ? `search-suggestion-${active}` : undefined}
        placeholder="Search messages"
        value={q}
        onInput={(e) => (track(e.currentTarget), setActive(-1))}
        onClick={(e) => track(e.currentTarget)}
        onBlur={() => setClosed(true)}
        onKeyDown={(e) => {
          if (!items.length) return;
          if (e.key === 'ArrowDown') (e.preventDefault(), setActive((active + 1) % items.length));
          else if (e.key === 'ArrowUp') (e.preventDefault(), setActive((active - 1 + items.length) % items.length));
          // A value's list (people, conversations) picks its first at once; the filters' names only when chosen.
          else if ((e.key === 'Enter' || e.key === 'Tab') && (active >= 0 || /:\S*$/.test(q.slice(0, caret)))) (e.preventDefault(), pick(Math.max(active, 0)));
          else if (e.key === 'Escape') (e.preventDefault(), e.stopPropagation(), setClosed(true));
        }}
      />
      {items.length ? (
        <ul class="switcher-list search-suggestions" role="listbox" id="search-suggestions" aria-label="Suggestions">
          {items.map((item, i) => (
            <li key={item.insert} id={`search-suggestion-${i}`} role="option" aria-selected={i === active} class={i === active ? 'active' : ''} onMouseDown={(e) => (e.preventDefault(), pick(i))}>
              {item.label}
            </li>
          ))}
        </ul>
      ) : null}
    </form>
  );
}

export function SearchResults({ query, onClose, onJump }: { query: string; onClose(): void; onJump(m: Message): void }) {
  const client = useStore();
  const [results, setResults] = useState<Message[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [asked, setAsked] = useState<string | null>(null);
  if (asked !== query) {
    setAsked(query);
    setResults(null);
    setError(null);
    const parsed = parseSearch(query, filterPeople(client));
    if (parsed.problems.length) setError(parsed.problems.join(' '));
    else if (!parsed.text && !Object.keys(parsed.params).length) setError('Type words to search for, or a filter such as from:@name.');
    else client.searchMessages(parsed.text, parsed.params).then(setResults, (err) => setError(err instanceof ApiError && err.status === 404 ? 'Search is not available on this server yet.' : errorMessage(err)));
  }
  const terms = searchTerms(parseSearch(query, filterPeople(client)).text);
  return (
    <aside class="panel" aria-label="Search results">
      <header>
        <h2>Results for “{query}”</h2>
        <button class="icon" aria-label="Close search results" onClick={onClose}><Icon name="close" /></button>
      </header>
      {error ? <p class="error" role="alert">{error}</p> : null}
      {!results && !error ? <div class="skeleton line w80" role="status" aria-label="Searching" /> : null}
      <ul class="results">
        {results?.map((m) => (
          <li key={m.id}>
            <button class="result" onClick={() => onJump(m)}>
              <span class="muted">
                {conversationTitle(client, m.channel_id)} · {m.display?.username || displayName(m.author_id ? client.store.users.get(m.author_id) : null)} ·{' '}
                {new Date(m.created_at).toLocaleString()}
              </span>
              <span class="snippet">
                <Highlighted text={plainText(m.content, m.content_json, (id, label) => { const u = client.store.users.get(id); return u ? displayName(u) : label; }).slice(0, 300)} terms={terms} />
              </span>
            </button>
          </li>
        ))}
        {results && results.length === 0 ? <li class="muted">Nothing found. Try fewer words or filters, or "a phrase" in quotes.</li> : null}
      </ul>
    </aside>
  );
}
