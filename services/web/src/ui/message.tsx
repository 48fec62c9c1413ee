// One message row: author, avatar, time, body, attachments, reactions, thread
// link, and the author's actions (edit, delete) in a hover/focus toolbar.
import { useEffect, useRef, useState } from 'preact/hooks';
import { errorMessage } from '../lib/api.js';
import { safeUrl } from '../lib/links.js';
import { relativeTime } from '../lib/rows.js';
import type { ShownMessage } from '../lib/store.js';
import { FILE_METADATA_TYPE, type FileWithDownload } from '../lib/types.js';
import { ExternalLink, MessageBody } from './content.js';
import { Dialog } from './dialog.js';
import { EmojiPicker } from './emoji-picker.js';
import { Lightbox } from './lightbox.js';
import { PdfPreview } from './pdf-preview.js';
import { avatarFileId, sameOriginPath, type AxidClient } from '../lib/client.js';
import { emojiFor } from '../lib/emoji.js';
import { ReactionGlyph } from './emoji-glyph.js';
import { displayName, useClient } from './context.js';
import { CopyButton } from './copy-button.js';
import { Icon } from './icons.js';
import { permalink } from '../lib/routes.js';
import { REMINDER_METADATA_TYPE } from '../lib/later.js';
import { ReminderNote, RemindMeButton } from './remind-me.js';
import { isArchived } from '../lib/team-chat.js';
import { PinButton, PinnedMark } from './pins.js';

const AVATAR_COLOURS = 10;

/** An avatar address as an <img> source: https, or a file of this server (its signed link). */
function avatarSrc(client: AxidClient, url: string | null | undefined): string | null {
  const fileId = avatarFileId(url, location.origin);
  return fileId ? client.fileLink(fileId) : safeUrl(url, { allowMailto: false });
}

/** A stable colour class (av-0..av-9) from an id, so a person keeps their colour everywhere. */
export function colourClass(id: string) {
  let h = 0;
  for (let i = 0; i < id.length; i++) h = (h * 31 + id.charCodeAt(i)) >>> 0;
  return `av-${h % AVATAR_COLOURS}`;
}

export function initials(name: string) {
  const words = name.trim().split(/[\s._-]+/).filter(Boolean);
  const letters = words.length > 1 ? words[0]!.charAt(0) + words[1]!.charAt(0) : name.trim().slice(0, 2);
  return letters.toUpperCase() || '?';
}

/** The uploaded image, a hook post's icon, else initials on the sender's colour (a hook's posts: the hook glyph, never its creator's face). */
export function Avatar({ userId, display, size = 36, webhook = false }: { userId: string | null; display?: ShownMessage['display']; size?: number; webhook?: boolean }) {
  const client = useClient();
  const user = userId ? client.store.users.get(userId) : undefined;
  const name = display?.username || displayName(user);
  const src = avatarSrc(client, webhook ? display?.icon_url : display ? display.icon_url ?? (display.username ? null : user?.avatar_url) : user?.avatar_url);
  if (src) return <img class={`avatar s${size}`} src={src} alt="" referrerpolicy="no-referrer" />;
  const emoji = display?.icon_emoji ? emojiFor(display.icon_emoji.slice(1, -1)) : null;
  if (emoji) return <span class={`avatar s${size} emoji-avatar`} aria-hidden="true">{emoji}</span>;
  if (webhook) return <span class={`avatar s${size} hook-avatar`} aria-hidden="true"><Icon name="zap" size={Math.round(size / 2)} /></span>;
  return (
    // The letters are drawn by CSS (attr()), not text: a link holding an avatar is named by what it says, and text
    // the eye reads but the name leaves out is a mismatch (axe label-content-name-mismatch on DM items).
    <span class={`avatar s${size} initials ${colourClass(display?.username ? `${userId}:${display.username}` : userId ?? name)}`} aria-hidden="true" data-initials={initials(name)} />
  );
}

/** What a message offers besides its text: reached with the arrow keys from the message (one Tab stop per message, as in Slack). */
const ACTIONS = '.toolbar button, .reactions button, .thread-link, button.edited';

/**
 * Keys on a message (the article is the Tab stop): Left and Right walk its actions,
 * Up and Down go to the message before or after, Escape from an action comes back
 * to the message. Keys typed in its edit box or in a link of its text are theirs.
 */
function onMessageKey(e: KeyboardEvent) {
  const article = e.currentTarget as HTMLElement;
  const target = e.target as HTMLElement;
  const actions = [...article.querySelectorAll<HTMLElement>(ACTIONS)];
  const at = actions.indexOf(target);
  if (target !== article && at < 0) return;
  if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
    if (!actions.length) return;
    e.preventDefault();
    const step = e.key === 'ArrowRight' ? 1 : -1;
    const next = at < 0 ? (step > 0 ? 0 : actions.length - 1) : (at + step + actions.length) % actions.length;
    actions[next]!.focus();
  } else if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
    const list = [...(article.closest('[role="log"], .thread-root') ?? document).querySelectorAll<HTMLElement>('article.message')];
    const other = list[list.indexOf(article) + (e.key === 'ArrowDown' ? 1 : -1)];
    e.preventDefault();
    other?.focus();
  } else if (e.key === 'Escape' && at >= 0) {
    // Back to the message; the key goes on (an open thread or panel still closes on Escape).
    article.focus();
  }
}

export function MessageItem({ message, grouped, inThread }: { message: ShownMessage; grouped: boolean; inThread?: boolean }) {
  const client = useClient();
  const store = client.store;
  const me = store.me!;
  const author = message.author_id ? store.users.get(message.author_id) : undefined;
  // An incoming webhook's post is the hook's (its name from level 3, docs/webhooks.md), not its creator's.
  const hook = Boolean(message.webhook_id);
  const name = message.display?.username || (hook ? 'Incoming webhook' : displayName(author));
  const mine = message.author_id === me.id;
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(message.content);
  const [picker, setPicker] = useState(false);
  const [history, setHistory] = useState(false);
  const [error, setError] = useState<string | null>(null);
  // ---- Up in an empty composer edits one's last message (client.editLastOwn, issue 34) ----
  const editBox = useRef<HTMLTextAreaElement>(null);
  const returnFocus = useRef<HTMLElement | null>(null);
  useEffect(() => {
    if (!mine) return;
    const check = () => {
      if (client.editRequest !== message.id) return;
      client.editRequest = null;
      returnFocus.current = document.activeElement as HTMLElement | null;
      setDraft(message.content);
      setEditing(true);
    };
    check();
    return client.store.subscribe(check);
  }, [message.id, mine]);
  useEffect(() => {
    if (editing) editBox.current?.focus();
    // Finished (saved or cancelled): back to the composer the Up came from.
    else if (returnFocus.current) (returnFocus.current.focus(), (returnFocus.current = null));
  }, [editing]);
  // ---- end ----
  const act = (fn: () => Promise<unknown>) => () => void fn().then(() => setError(null), (err) => setError(errorMessage(err)));
  const full = new Date(message.created_at).toLocaleString();
  // The message a permalink or search result opened.
  const highlighted = client.highlight?.id === message.id;
  // Level 3: an archived channel is read-only, so its writing actions are not offered.
  const readOnly = isArchived(store.channels.get(message.channel_id));

  return (
    <article
      class={`message${grouped ? ' grouped' : ''}${highlighted ? ' highlight' : ''}${picker ? ' acting' : ''}`}
      aria-current={highlighted ? 'true' : undefined}
      data-state={message.state}
      data-message-id={message.id}
      aria-label={`${name}: ${message.content.slice(0, 100)}`}
      tabIndex={0}
      onKeyDown={onMessageKey}
    >
      <div class="gutter">{grouped ? null : <Avatar userId={message.author_id} display={message.display} webhook={hook} />}</div>
      <div class="main">
        {grouped ? null : (
          <header>
            <span class="author">{name}</span>
            {hook ? <span class="badge" title="Posted by an incoming webhook">app</span> : author?.is_agent ? <span class="badge">bot</span> : null}
            <time dateTime={message.created_at} title={full} aria-label={full}>
              {relativeTime(message.created_at)}
            </time>
          </header>
        )}
        {message.pinned_at ? <PinnedMark message={message} /> : null}
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
            <textarea
              ref={editBox}
              aria-label="Edit message"
              value={draft}
              onInput={(e) => setDraft(e.currentTarget.value)}
              onKeyDown={(e) => {
                // As in the composer: Enter saves, Shift+Enter breaks the line (never during IME composition).
                if (e.key === 'Escape') setEditing(false);
                else if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) (e.preventDefault(), e.currentTarget.form?.requestSubmit());
              }}
            />
            <button type="submit" class="btn btn-primary small">Save</button>
            <button type="button" class="btn small" onClick={() => setEditing(false)}>Cancel</button>
          </form>
        ) : (
          <>
            {message.metadata?.type === REMINDER_METADATA_TYPE ? <ReminderNote data={message.metadata.data} /> : null}
            <MessageBody message={message} />
          </>
        )}
        {message.unfurls?.length ? <LinkPreviews message={message} removable={mine && message.state === 'sent'} onRemove={act(() => client.removePreviews(message))} /> : null}
        {message.streaming ? (
          <span class="streaming" role="status" aria-label={`${name} is still writing`}>
            <span class="dots" aria-hidden="true" /> writing…
          </span>
        ) : null}
        {message.edited_at ? (
          store.features.editHistory && message.state === 'sent' ? (
            <button class="link edited" tabIndex={-1} title={`Edited ${new Date(message.edited_at).toLocaleString()}: show earlier versions`} onClick={() => setHistory(true)}>
              (edited)
            </button>
          ) : (
            <span class="muted edited" title={new Date(message.edited_at).toLocaleString()}>(edited)</span>
          )
        ) : null}
        {history ? <EditHistory message={message} onClose={() => setHistory(false)} /> : null}
        {message.metadata?.type === FILE_METADATA_TYPE ? <FileAttachment data={message.metadata.data} /> : null}
        {message.metadata && message.metadata.type !== FILE_METADATA_TYPE && client.prefs.devMetadata ? (
          <details class="metadata">
            <summary>metadata: {message.metadata.type}</summary>
            <pre>{JSON.stringify(message.metadata.data, null, 2)}</pre>
          </details>
        ) : null}
        {message.state === 'failed' ? (
          <p class="error" role="alert">
            {client.willResend(message.id) ? 'Not sent: it goes when the connection is back.' : 'Not sent.'}{' '}
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
              tabIndex={-1}
              disabled={readOnly}
              aria-pressed={r.user_ids.includes(me.id)}
              title={`${r.user_ids.map((id) => displayName(store.users.get(id))).join(', ')} reacted with :${r.emoji}:`}
              onClick={act(() => client.toggleReaction(message, r.emoji))}
            >
              <ReactionGlyph emoji={r.emoji} /> <span class="count">{r.count}</span>
            </button>
          ))}
        </div>
        {!inThread && message.thread ? (
          <button class="link thread-link" tabIndex={-1} onClick={() => void client.openThreadOf(message.id)}>
            {message.thread.reply_count} {message.thread.reply_count === 1 ? 'reply' : 'replies'}
          </button>
        ) : null}
        {picker ? <EmojiPicker onClose={() => setPicker(false)} onPick={(e) => act(() => client.toggleReaction(message, e.shortcodes[0] ?? e.unicode))()} /> : null}
      </div>
      {message.state === 'sent' ? (
        <div class="toolbar" role="toolbar" aria-label="Message actions">
          {readOnly ? null : <button tabIndex={-1} aria-label="Add reaction" title="Add reaction" onClick={() => setPicker(!picker)}><Icon name="smile" /></button>}
          {!inThread && !readOnly ? <button tabIndex={-1} aria-label="Reply in thread" title="Reply in thread" onClick={() => void client.openThreadOf(message.id)}><Icon name="reply" /></button> : null}
          <CopyButton text={permalink(location.origin, message)} label="Copy link" glyph="link" tabIndex={-1} />
          {store.features.later ? <RemindMeButton message={message} /> : null}
          {readOnly ? null : <PinButton message={message} onError={setError} />}
          {mine && !readOnly ? <button tabIndex={-1} aria-label="Edit message" title="Edit" onClick={() => (setDraft(message.content), setEditing(true))}><Icon name="pencil" /></button> : null}
          {(mine || client.isAdmin()) && !readOnly ? (
            <button tabIndex={-1} aria-label="Delete message" title="Delete" onClick={act(async () => (confirm('Delete this message?') ? client.remove(message) : undefined))}>
              <Icon name="trash" />
            </button>
          ) : null}
        </div>
      ) : null}
    </article>
  );
}

/** Earlier versions of a message (feature level 3: GET .../messages/{id}/edits), newest first. */
function EditHistory({ message, onClose }: { message: ShownMessage; onClose(): void }) {
  const client = useClient();
  const [versions, setVersions] = useState<{ content: string; edited_at: string; editor_id: string | null }[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => void client.editHistory(message).then(setVersions, (err) => setError(errorMessage(err))), [message.id]);
  return (
    <Dialog title="Edit history" onClose={onClose}>
      {error ? <p class="error" role="alert">{error}</p> : null}
      {!versions && !error ? <div class="skeleton line w80" role="status" aria-label="Loading the history" /> : null}
      <ol class="versions">
        <li>
          <span class="muted">Now</span>
          <MessageBody message={message} />
        </li>
        {versions?.map((v, i) => (
          <li key={i}>
            <time class="muted" dateTime={v.edited_at}>{new Date(v.edited_at).toLocaleString()}</time>
            <MessageBody message={{ ...message, content: v.content, content_json: null }} />
          </li>
        ))}
      </ol>
    </Dialog>
  );
}

function FileAttachment({ data }: { data: Record<string, unknown> }) {
  const client = useClient();
  const [info, setInfo] = useState<FileWithDownload | null>(null);
  const [error, setError] = useState<string | null>(null);
  const id = typeof data.file_id === 'string' ? data.file_id : '';
  const name = typeof data.name === 'string' ? data.name : 'file';
  const isImage = typeof data.content_type === 'string' && /^image\/(png|jpeg|gif|webp)$/.test(data.content_type);
  const isPdf = data.content_type === 'application/pdf';
  // Level 3: a deleted file leaves its messages marked `removed` (nothing to fetch).
  const removed = data.removed === true;
  useEffect(() => {
    if (!id || removed) return;
    client.fileInfo(id).then(setInfo, (err) => setError(errorMessage(err)));
  }, [id, removed]);
  const [zoom, setZoom] = useState(false);
  const linkHref = info?.download_url ? sameOriginPath(info.download_url, location.origin) : null;
  if (removed) {
    return (
      <div class="file">
        <span class="muted">This file was removed.</span>
      </div>
    );
  }
  return (
    <div class="file">
      {isImage && linkHref ? (
        <button type="button" class="image-button" aria-label={`Open ${name}`} onClick={() => setZoom(true)}>
          <img class="file-image" src={linkHref} alt={name} loading="lazy" />
        </button>
      ) : null}
      {isPdf && linkHref ? <PdfPreview href={linkHref} name={name} size={typeof data.size === 'number' ? data.size : null} /> : null}
      {zoom && linkHref ? <Lightbox src={linkHref} alt={name} onClose={() => setZoom(false)} /> : null}
      {linkHref ? (
        <a class="btn small" href={linkHref} download={name} rel="noopener noreferrer">
          <Icon name="download" size={14} /> Download {name}
        </a>
      ) : (
        <span class="muted">{error ?? `${name} (loading…)`}</span>
      )}
      {typeof data.size === 'number' ? <span class="muted"> {formatSize(data.size)}</span> : null}
    </div>
  );
}

export const formatSize = (n: number) => (n < 1024 ? `${n} B` : n < 1048576 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1048576).toFixed(1)} MB`);

/** Level 3: the link previews the worker stored; their images are Axid's own copies (contract §14). */
function LinkPreviews({ message, removable, onRemove }: { message: ShownMessage; removable: boolean; onRemove: () => void }) {
  return (
    <div class="unfurls">
      {(message.unfurls ?? []).map((u) => {
        const image = safeUrl(u.image_url, { allowMailto: false });
        return (
          <div class="unfurl card" key={u.url}>
            <ExternalLink href={u.url} class="unfurl-link">
              {u.site_name ? <span class="muted unfurl-site">{u.site_name}</span> : null}
              <strong>{u.title || u.url}</strong>
              {u.description ? <span class="muted">{u.description}</span> : null}
            </ExternalLink>
            {image ? <img class="unfurl-image" src={image} alt="" loading="lazy" referrerpolicy="no-referrer" /> : null}
          </div>
        );
      })}
      {removable ? (
        <button class="link small" aria-label="Remove link previews" onClick={onRemove}>
          Remove previews
        </button>
      ) : null}
    </div>
  );
}
