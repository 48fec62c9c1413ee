// Message search (feature level 3, contract §9: GET /search/messages with the
// web-search syntax: words, "phrases", -excluded). Results show their
// conversation and author with the matched words marked; a click opens the
// conversation and highlights the message. Absent below level 3.
import { useState } from 'preact/hooks';
import { ApiError, errorMessage } from '../lib/api.js';
import { searchTerms } from '../lib/search.js';
import type { Message } from '../lib/types.js';
import { displayName, useStore } from './context.js';
import { conversationTitle } from './sidebar.js';
import { Icon } from './icons.js';
import { plainText } from './markdown.js';

function Highlighted({ text, terms }: { text: string; terms: string[] }) {
  if (!terms.length) return <>{text}</>;
  const pattern = new RegExp(`(${terms.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})`, 'gi');
  return <>{text.split(pattern).map((part, i) => (i % 2 ? <mark key={i}>{part}</mark> : part))}</>;
}

export function SearchBox({ onResults }: { onResults(q: string): void }) {
  const client = useStore();
  const [q, setQ] = useState('');
  if (!client.store.features.search) return null;
  return (
    <form role="search" class="search-form" onSubmit={(e) => (e.preventDefault(), q.trim() && onResults(q.trim()))}>
      <input type="search" aria-label="Search messages" placeholder="Search messages" value={q} onInput={(e) => setQ(e.currentTarget.value)} />
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
    client.searchMessages(query).then(setResults, (err) => setError(err instanceof ApiError && err.status === 404 ? 'Search is not available on this server yet.' : errorMessage(err)));
  }
  const terms = searchTerms(query);
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
        {results && results.length === 0 ? <li class="muted">Nothing found. Try fewer words, or "a phrase" in quotes.</li> : null}
      </ul>
    </aside>
  );
}
