// The Threads view (feature level 3, GET /threads): the threads the person
// follows (started, replied to, or was mentioned in, as in Slack and
// Mattermost), the one with the newest reply first, those with replies not
// read yet marked. Opening one opens its conversation and the thread panel at
// its newest reply, and marks it read.
import { useEffect, useState } from 'preact/hooks';
import { errorMessage } from '../lib/api.js';
import type { FollowedThread } from '../lib/types.js';
import { conversationTitle, displayName, useStore } from './context.js';
import { Icon } from './icons.js';
import { plainText } from './markdown.js';

export function ThreadsPanel({ onClose, onOpen }: { onClose(): void; onOpen(conversationId: string, messageId: string): void }) {
  const client = useStore();
  const [threads, setThreads] = useState<FollowedThread[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  // Reloaded when a message arrives or changes anywhere (store.version), so new replies show as they come.
  const seen = client.store.messages.size;
  useEffect(() => void client.followedThreads().then((t) => (setThreads(t), setError(null)), (err) => setError(errorMessage(err))), [seen]);
  const name = (id: string | null) => displayName(id ? client.store.users.get(id) : null);
  const open = async (t: FollowedThread) => {
    if (t.unread_replies) {
      setThreads((all) => all?.map((x) => (x.root.id === t.root.id ? { ...x, unread_replies: 0 } : x)) ?? null);
      // Told before the thread opens, so the list reloaded by its messages arriving has it read.
      await client.markThreadRead(t.root.id, t.last_reply_id).catch(() => undefined);
    }
    onOpen(t.root.channel_id, t.last_reply_id);
  };
  const unread = threads?.filter((t) => t.unread_replies).length ?? 0;
  return (
    <aside class="panel threads-view" aria-label="Threads">
      <header>
        <h2>Threads{unread ? <span class="muted"> · {unread} with new replies</span> : null}</h2>
        <button class="icon" aria-label="Close threads" onClick={onClose}><Icon name="close" /></button>
      </header>
      {error ? <p class="error" role="alert">{error}</p> : null}
      {!threads && !error ? <div class="skeleton line w80" role="status" aria-label="Loading threads" /> : null}
      <ul class="results">
        {threads?.map((t) => {
          const replies = t.root.thread?.reply_count ?? 0;
          return (
            <li key={t.root.id}>
              <button class={`result followed-thread${t.unread_replies ? ' unread' : ''}`} onClick={() => void open(t)}>
                <span class="muted">
                  {conversationTitle(client, t.root.channel_id)} · {t.root.display?.username || name(t.root.author_id)}
                </span>
                <span class="snippet">{plainText(t.root.content, t.root.content_json, (id, fallback) => client.store.users.get(id) ? name(id) : fallback).slice(0, 200)}</span>
                <span class="muted thread-meta">
                  {replies} {replies === 1 ? 'reply' : 'replies'}
                  {t.root.thread?.last_reply_at ? ` · last ${new Date(t.root.thread.last_reply_at).toLocaleString()}` : ''}
                  {t.unread_replies ? <span class="new-replies"> {t.unread_replies} new {t.unread_replies === 1 ? 'reply' : 'replies'}</span> : null}
                </span>
              </button>
            </li>
          );
        })}
        {threads && threads.length === 0 ? <li class="muted empty-note">No threads yet. Threads you start, reply to or are mentioned in show here.</li> : null}
      </ul>
    </aside>
  );
}
