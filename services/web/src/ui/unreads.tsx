// All unreads: every conversation's unread messages (top-level, by others,
// after the read mark), grouped by conversation, mentions first, each group
// with "Mark as read", and "Mark all as read". A message opens where it
// lives. The counts are the sidebar's (the server's at level 3).
import { useEffect, useState } from 'preact/hooks';
import { errorMessage } from '../lib/api.js';
import type { ShownMessage } from '../lib/store.js';
import { conversationTitle, displayName, useStore } from './context.js';
import { Icon } from './icons.js';
import { plainText } from './markdown.js';
import { unreadLabel } from './sidebar.js';

export function UnreadsPanel({ onClose, onOpen }: { onClose(): void; onOpen(conversationId: string, messageId: string): void }) {
  const client = useStore();
  const s = client.store;
  const ids = [...s.channels.keys(), ...s.dms.keys()]
    .filter((id) => s.unreadCount(id) > 0)
    .sort((a, b) => s.mentionCount(b) - s.mentionCount(a) || conversationTitle(client, a).localeCompare(conversationTitle(client, b)));
  const [messages, setMessages] = useState(new Map<string, ShownMessage[]>());
  const [error, setError] = useState<string | null>(null);
  const key = ids.map((id) => `${id}:${s.unreadCount(id)}`).join(',');
  useEffect(() => {
    Promise.all(ids.map(async (id) => [id, await client.unreadMessages(id)] as const)).then(
      (pairs) => (setMessages(new Map(pairs)), setError(null)),
      (err) => setError(errorMessage(err)),
    );
  }, [key]);
  const read = (list: string[]) => void Promise.all(list.map((id) => client.markConversationRead(id))).catch((err) => setError(errorMessage(err)));
  const name = (id: string | null) => displayName(id ? s.users.get(id) : null);
  return (
    <aside class="panel unreads-view" aria-label="All unreads">
      <header>
        <h2>All unreads</h2>
        <button class="icon" aria-label="Close all unreads" onClick={onClose}><Icon name="close" /></button>
      </header>
      {ids.length ? (
        <p class="row">
          <button class="btn small" onClick={() => read(ids)}>Mark all as read</button>
        </p>
      ) : null}
      {error ? <p class="error" role="alert">{error}</p> : null}
      <div class="results">
        {ids.map((id) => {
          const title = conversationTitle(client, id);
          return (
            <section key={id} class="unread-group" aria-label={`${title}, ${unreadLabel(s.unreadCount(id), s.mentionCount(id))}`}>
              <header>
                <h3>{title}</h3>
                <span class="muted">{unreadLabel(s.unreadCount(id), s.mentionCount(id))}</span>
                <button class="btn small" onClick={() => read([id])}>
                  Mark <span class="sr-only">{title} </span>as read
                </button>
              </header>
              <ul>
                {(messages.get(id) ?? []).map((m) => (
                  <li key={m.id}>
                    <button class={`result${s.mentionsMe(m) ? ' mention' : ''}`} onClick={() => onOpen(id, m.id)}>
                      <span class="muted">
                        {m.display?.username || name(m.author_id)} · <time dateTime={m.created_at}>{new Date(m.created_at).toLocaleString()}</time>
                      </span>
                      <span class="snippet">{plainText(m.content, m.content_json, (u, fallback) => (s.users.get(u) ? name(u) : fallback)).slice(0, 300)}</span>
                    </button>
                  </li>
                ))}
                {!messages.has(id) ? <li class="skeleton line w60" role="status" aria-label="Loading" /> : null}
              </ul>
            </section>
          );
        })}
        {ids.length === 0 ? <p class="muted empty-note">You are all caught up: nothing unread.</p> : null}
      </div>
    </aside>
  );
}
