// The composer: Enter sends, Shift+Enter breaks the line (never during IME
// composition); paste or drop a file to upload it (XMLHttpRequest progress);
// `@name` offers members in a listbox and the chosen ones become mention nodes.
// Its text is the draft of its own conversation (lib/drafts.ts): the parent
// keys it by conversation, so a switch starts from that conversation's draft.
import { useEffect, useRef, useState } from 'preact/hooks';
import { errorMessage, uploadFile } from '../lib/api.js';
import { draftKey, loadDraft, saveDraft } from '../lib/drafts.js';
import { mentionDoc, mentionedIn } from '../lib/mentions.js';
import { threadKey } from '../lib/store.js';
import { EmojiPicker } from './emoji-picker.js';
import type { User } from '../lib/types.js';
import { displayName, useClient } from './context.js';
import { Icon } from './icons.js';

interface Upload {
  name: string;
  progress: number;
}

/** `focusRequest`: the caret goes into the text box whenever it changes (and at mount when it is not 0). */
export function Composer({ conversationId, threadId, label, focusRequest = 0 }: { conversationId: string; threadId: string | null; label: string; focusRequest?: number }) {
  const client = useClient();
  const storageKey = draftKey(conversationId, threadId);
  const [text, setText] = useState(() => loadDraft(client.storage, storageKey));
  const [error, setError] = useState<string | null>(null);
  const [uploads, setUploads] = useState<Upload[]>([]);
  const [query, setQuery] = useState<string | null>(null);
  const [active, setActive] = useState(0);
  const [emoji, setEmoji] = useState(false);
  const area = useRef<HTMLTextAreaElement>(null);
  const listId = `mentions-${threadId ?? conversationId}`;

  // After paint: a dialog that closed in the same render (the Ctrl+K switcher) gives focus back first.
  useEffect(() => {
    if (focusRequest) area.current?.focus();
  }, [focusRequest]);

  // A send that failed for want of a connection goes again by itself once it is back (client.send): its error goes then.
  useEffect(() => {
    if (client.streamState === 'live') setError(null);
  }, [client.streamState]);

  // Saved a moment after typing stops, and at once when the composer goes or the page is left.
  const latest = useRef(text);
  latest.current = text;
  useEffect(() => {
    const timer = setTimeout(() => saveDraft(client.storage, storageKey, text), 300);
    return () => clearTimeout(timer);
  }, [text]);
  useEffect(() => {
    const flush = () => saveDraft(client.storage, storageKey, latest.current);
    window.addEventListener('pagehide', flush);
    return () => (window.removeEventListener('pagehide', flush), flush());
  }, [storageKey]);

  const candidates =
    query === null
      ? []
      : [...client.store.users.values()].filter((u) => u.name.toLowerCase().startsWith(query.toLowerCase()) || displayName(u).toLowerCase().startsWith(query.toLowerCase())).slice(0, 6);

  const send = async () => {
    const content = text.trim();
    if (!content) return;
    const doc = mentionDoc(content, mentionedIn(content, client.store.users.values()));
    setText('');
    saveDraft(client.storage, storageKey, '');
    try {
      await client.send(conversationId, content, { threadId, contentJson: doc });
      setError(null);
    } catch (err) {
      setError(errorMessage(err));
    }
  };

  const upload = async (files: File[]) => {
    for (const file of files) {
      const entry: Upload = { name: file.name, progress: 0 };
      setUploads((u) => [...u, entry]);
      try {
        const info = await uploadFile(file, client.key!, (p) => setUploads((u) => u.map((x) => (x.name === entry.name ? { ...x, progress: p } : x))));
        await client.sendFile(conversationId, info, threadId);
        setError(null);
      } catch (err) {
        setError(errorMessage(err));
      } finally {
        setUploads((u) => u.filter((x) => x.name !== entry.name));
      }
    }
  };

  const pick = (u: User) => {
    const el = area.current!;
    const before = text.slice(0, el.selectionStart).replace(/@([^\s@]*)$/, `@${u.name} `);
    setText(before + text.slice(el.selectionStart));
    setQuery(null);
  };

  return (
    <form
      class="composer"
      onSubmit={(e) => (e.preventDefault(), void send())}
      onDragOver={(e) => e.preventDefault()}
      onDrop={(e) => {
        e.preventDefault();
        const files = [...(e.dataTransfer?.files ?? [])];
        if (files.length) void upload(files);
      }}
    >
      {uploads.map((u) => (
        <div class="upload" key={u.name}>
          <span>Uploading {u.name}</span>
          <progress max={1} value={u.progress} aria-label={`Uploading ${u.name}`} />
        </div>
      ))}
      {error ? <p class="error" role="alert">{error}</p> : null}
      {emoji ? (
        <EmojiPicker
          onClose={() => setEmoji(false)}
          onPick={(e) => {
            // Inserted at the caret; the dialog gives focus back to the button, so the text box is focused again after.
            const el = area.current!;
            const at = el.selectionStart ?? text.length;
            setText(text.slice(0, at) + e.unicode + text.slice(el.selectionEnd ?? at));
            setTimeout(() => el.focus(), 0);
          }}
        />
      ) : null}
      {candidates.length ? (
        <ul class="mention-list" role="listbox" id={listId} aria-label="Mention someone">
          {candidates.map((u, i) => (
            <li key={u.id} id={`${listId}-${i}`} role="option" aria-selected={i === active} class={i === active ? 'active' : ''} onMouseDown={(e) => (e.preventDefault(), pick(u))}>
              {displayName(u)} <span class="muted">@{u.name}</span>
            </li>
          ))}
        </ul>
      ) : null}
      <div class="composer-row">
        <textarea
          ref={area}
          rows={1}
          value={text}
          placeholder={label}
          aria-label={label}
          aria-controls={candidates.length ? listId : undefined}
          aria-activedescendant={candidates.length ? `${listId}-${active}` : undefined}
          onInput={(e) => {
            const value = e.currentTarget.value;
            setText(value);
            const m = /(?:^|\s)@([^\s@]*)$/.exec(value.slice(0, e.currentTarget.selectionStart));
            setQuery(m ? m[1]! : null);
            setActive(0);
            if (value.trim()) client.typing(conversationId);
          }}
          onKeyDown={(e) => {
            if (candidates.length) {
              if (e.key === 'ArrowDown') return (e.preventDefault(), setActive((active + 1) % candidates.length));
              if (e.key === 'ArrowUp') return (e.preventDefault(), setActive((active - 1 + candidates.length) % candidates.length));
              if (e.key === 'Enter' || e.key === 'Tab') return (e.preventDefault(), pick(candidates[active]!));
              if (e.key === 'Escape') return (e.stopPropagation(), setQuery(null));
            }
            if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
              e.preventDefault();
              void send();
            }
            // Up in an empty box edits one's last message here, as in Slack (ui/shortcuts.tsx lists it).
            else if (e.key === 'ArrowUp' && !text && !e.altKey && !e.shiftKey && !e.ctrlKey && !e.metaKey && client.editLastOwn(threadId ? threadKey(threadId) : conversationId)) e.preventDefault();
          }}
          onPaste={(e) => {
            const files = [...(e.clipboardData?.files ?? [])];
            if (files.length) {
              e.preventDefault();
              void upload(files);
            }
          }}
        />
        <button type="button" class="btn attach" aria-label="Insert emoji" title="Insert emoji" onClick={() => setEmoji(true)}><Icon name="smile" size={18} /></button>
        <label class="btn attach" title="Attach a file">
          <Icon name="paperclip" size={18} /><span class="sr-only">Attach a file</span>
          <input type="file" class="sr-only" onChange={(e) => (void upload([...(e.currentTarget.files ?? [])]), (e.currentTarget.value = ''))} />
        </label>
        <button type="submit" class="btn btn-primary" disabled={uploads.length > 0}>
          Send
        </button>
      </div>
    </form>
  );
}
