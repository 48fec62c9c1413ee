// One message row: author, avatar, time, body, attachments, reactions, thread
// link, and the author's actions (edit, delete) in a hover/focus toolbar.
import { useEffect, useState } from 'preact/hooks';
import { errorMessage } from '../lib/api.js';
import { safeImageUrl, safeUrl } from '../lib/links.js';
import { relativeTime } from '../lib/rows.js';
import type { ShownMessage } from '../lib/store.js';
import { FILE_METADATA_TYPE, type FileWithDownload } from '../lib/types.js';
import { MessageBody } from './content.js';
import { displayName, useClient } from './context.js';

export const EMOJI: [string, string][] = [
  ['thumbsup', '👍'],
  ['heart', '❤️'],
  ['joy', '😂'],
  ['tada', '🎉'],
  ['eyes', '👀'],
  ['rocket', '🚀'],
  ['white_check_mark', '✅'],
  ['thinking_face', '🤔'],
];
const emojiChar = (name: string) => EMOJI.find(([n]) => n === name)?.[1] ?? name;

export function Avatar({ userId, size = 36 }: { userId: string | null; size?: number }) {
  const client = useClient();
  const user = userId ? client.store.users.get(userId) : undefined;
  const src = safeUrl(user?.avatar_url, { allowMailto: false });
  const name = displayName(user);
  return src ? (
    <img class={`avatar s${size}`} src={src} alt="" referrerpolicy="no-referrer" />
  ) : (
    <span class={`avatar s${size} initials`} aria-hidden="true">
      {name.slice(0, 1).toUpperCase()}
    </span>
  );
}

export function MessageItem({ message, grouped, inThread }: { message: ShownMessage; grouped: boolean; inThread?: boolean }) {
  const client = useClient();
  const store = client.store;
  const me = store.me!;
  const author = message.author_id ? store.users.get(message.author_id) : undefined;
  const name = message.display?.username || displayName(author);
  const mine = message.author_id === me.id;
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(message.content);
  const [picker, setPicker] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const act = (fn: () => Promise<unknown>) => () => void fn().then(() => setError(null), (err) => setError(errorMessage(err)));
  const full = new Date(message.created_at).toLocaleString();

  return (
    <article class={`message${grouped ? ' grouped' : ''}`} data-state={message.state} data-message-id={message.id} aria-label={`Message from ${name}`}>
      <div class="gutter">{grouped ? null : <Avatar userId={message.author_id} />}</div>
      <div class="main">
        {grouped ? null : (
          <header>
            <span class="author">{name}</span>
            {author?.is_agent || message.webhook_id ? <span class="badge">bot</span> : null}
            <time dateTime={message.created_at} title={full}>
              {relativeTime(message.created_at)}
            </time>
          </header>
        )}
        {editing ? (
          <form
            class="edit"
            onSubmit={(e) => {
              e.preventDefault();
              act(async () => {
                await client.edit(message, draft);
                setEditing(false);
              })();
            }}
          >
            <textarea aria-label="Edit message" value={draft} onInput={(e) => setDraft(e.currentTarget.value)} onKeyDown={(e) => e.key === 'Escape' && setEditing(false)} />
            <button type="submit" class="btn btn-primary small">Save</button>
            <button type="button" class="btn small" onClick={() => setEditing(false)}>Cancel</button>
          </form>
        ) : (
          <MessageBody message={message} />
        )}
        {message.edited_at ? <span class="muted edited" title={new Date(message.edited_at).toLocaleString()}>(edited)</span> : null}
        {message.metadata?.type === FILE_METADATA_TYPE ? <FileAttachment data={message.metadata.data} /> : null}
        {message.metadata && message.metadata.type !== FILE_METADATA_TYPE ? (
          <details class="metadata">
            <summary>metadata: {message.metadata.type}</summary>
            <pre>{JSON.stringify(message.metadata.data, null, 2)}</pre>
          </details>
        ) : null}
        {message.state === 'failed' ? (
          <p class="error" role="alert">
            Not sent.{' '}
            <button class="link" onClick={act(() => client.retry(message.id))}>Retry</button>{' '}
            <button class="link" onClick={() => client.store.discardPending(message.id)}>Discard</button>
          </p>
        ) : null}
        {error ? <p class="error" role="alert">{error}</p> : null}
        <div class="reactions">
          {message.reactions.map((r) => (
            <button
              key={r.emoji}
              class={`reaction${r.user_ids.includes(me.id) ? ' mine' : ''}`}
              aria-pressed={r.user_ids.includes(me.id)}
              title={`${r.user_ids.map((id) => displayName(store.users.get(id))).join(', ')} reacted with :${r.emoji}:`}
              onClick={act(() => client.toggleReaction(message, r.emoji))}
            >
              {emojiChar(r.emoji)} <span class="count">{r.count}</span>
            </button>
          ))}
        </div>
        {!inThread && message.thread ? (
          <button class="link thread-link" onClick={() => void client.openThreadOf(message.id)}>
            {message.thread.reply_count} {message.thread.reply_count === 1 ? 'reply' : 'replies'}
          </button>
        ) : null}
        {picker ? (
          <div class="emoji-picker" role="menu" aria-label="Pick a reaction" onKeyDown={(e) => e.key === 'Escape' && setPicker(false)}>
            {EMOJI.map(([n, c]) => (
              <button key={n} role="menuitem" aria-label={n} title={`:${n}:`} onClick={() => (setPicker(false), act(() => client.toggleReaction(message, n))())}>
                {c}
              </button>
            ))}
          </div>
        ) : null}
      </div>
      {message.state === 'sent' ? (
        <div class="toolbar" role="toolbar" aria-label="Message actions">
          <button aria-label="Add reaction" title="Add reaction" onClick={() => setPicker(!picker)}>☺</button>
          {!inThread ? <button aria-label="Reply in thread" title="Reply in thread" onClick={() => void client.openThreadOf(message.id)}>↩</button> : null}
          {mine ? <button aria-label="Edit message" title="Edit" onClick={() => (setDraft(message.content), setEditing(true))}>✎</button> : null}
          {mine || client.isAdmin() ? (
            <button aria-label="Delete message" title="Delete" onClick={act(async () => (confirm('Delete this message?') ? client.remove(message) : undefined))}>
              🗑
            </button>
          ) : null}
        </div>
      ) : null}
    </article>
  );
}

function FileAttachment({ data }: { data: Record<string, unknown> }) {
  const client = useClient();
  const [info, setInfo] = useState<FileWithDownload | null>(null);
  const [error, setError] = useState<string | null>(null);
  const id = typeof data.file_id === 'string' ? data.file_id : '';
  const name = typeof data.name === 'string' ? data.name : 'file';
  const isImage = typeof data.content_type === 'string' && /^image\/(png|jpeg|gif|webp)$/.test(data.content_type);
  useEffect(() => {
    if (!id) return;
    client.fileInfo(id).then(setInfo, (err) => setError(errorMessage(err)));
  }, [id]);
  const linkHref = info?.download_url ? downloadHref(info.download_url) : null;
  return (
    <div class="file">
      {isImage && linkHref ? <img class="file-image" src={linkHref} alt={name} loading="lazy" /> : null}
      {linkHref ? (
        <a class="btn small" href={linkHref} download={name} rel="noopener noreferrer">
          ⬇ Download {name}
        </a>
      ) : (
        <span class="muted">{error ?? `${name} (loading…)`}</span>
      )}
      {typeof data.size === 'number' ? <span class="muted"> {formatSize(data.size)}</span> : null}
    </div>
  );
}

/**
 * The embedded store's signed links are API paths under PUBLIC_BASE_URL: use
 * them on the origin the app was loaded from (the same server, maybe reached
 * by another name). Real S3's presigned https links are used as they are.
 */
function downloadHref(raw: string): string | null {
  try {
    const url = new URL(raw, location.origin);
    if (url.pathname.startsWith('/api/v1/files/')) return `${location.origin}${url.pathname}${url.search}`;
    return safeImageUrl(url.href, location.origin);
  } catch {
    return null;
  }
}

export const formatSize = (n: number) => (n < 1024 ? `${n} B` : n < 1048576 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1048576).toFixed(1)} MB`);
