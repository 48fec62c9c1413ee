// The composer: Enter sends, Shift+Enter breaks the line (never during IME
// composition); paste or drop a file to upload it (XMLHttpRequest progress);
// `@name` offers members in a listbox and the chosen ones become mention nodes.
// Its text is the draft of its own conversation (lib/drafts.ts): the parent
// keys it by conversation, so a switch starts from that conversation's draft.
import { useEffect, useRef, useState } from 'preact/hooks';
import { errorMessage, uploadFile } from '../lib/api.js';
import { draftKey, loadDraft, saveDraft } from '../lib/drafts.js';
import { mentionDoc, mentionedIn } from '../lib/mentions.js';
import { mentionCandidates, type MentionCandidate } from '../lib/mention-candidates.js';
import { threadKey } from '../lib/store.js';
import { EmojiPicker } from './emoji-picker.js';
import { useClient } from './context.js';
import { Icon } from './icons.js';
import { ScheduledIndicator, ScheduleSend } from './schedule-send.js';
import { CommandList, runCommand, useCommandMatches } from './slash-commands.js';
import { CommandError, type Command } from '../lib/agents.js';

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
  // Level 3: `/` offers the agents' commands (slash-commands.tsx); what a command did shows under the box.
  const commands = useCommandMatches(client, text);
  const commandListId = `commands-${threadId ?? conversationId}`;
  const [note, setNote] = useState<string | null>(null);

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

  // People; at level 3 also @here, @channel and user groups (lib/mention-candidates.ts).
  const candidates = query === null ? [] : mentionCandidates(query, client.store.users.values(), client.store.features.teamChat ? client.store.team.groups.values() : null);

  const send = async () => {
    const content = text.trim();
    if (!content) return;
    try {
      // The text as typed: a space before the `/` posts it as a message.
      const done = await runCommand(client, { conversationId, threadId, text });
      if (done !== null) {
        setText('');
        saveDraft(client.storage, storageKey, '');
        setNote(done);
        setError(null);
        return;
      }
    } catch (err) {
      // The text stays, to be fixed: the refusal says what is wrong with the command.
      setError(err instanceof CommandError ? err.message : errorMessage(err));
      return;
    }
    setNote(null);
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

  const pickCommand = (c: Command) => {
    setText(`/${c.name} `);
    setActive(0);
    area.current?.focus();
  };

  const pick = (c: MentionCandidate) => {
    const el = area.current!;
    const before = text.slice(0, el.selectionStart).replace(/@([^\s@]*)$/, `@${c.insert} `);
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
      {client.store.features.later ? <ScheduledIndicator conversationId={conversationId} threadId={threadId} /> : null}
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
      {note ? <p class="muted command-note" role="status">{note}</p> : null}
      {commands.length ? <CommandList id={commandListId} matches={commands} active={Math.min(active, commands.length - 1)} onPick={pickCommand} /> : null}
      {candidates.length ? (
        <ul class="mention-list" role="listbox" id={listId} aria-label="Mention someone">
          {candidates.map((c, i) => (
            <li key={c.key} id={`${listId}-${i}`} role="option" aria-selected={i === active} class={i === active ? 'active' : ''} onMouseDown={(e) => (e.preventDefault(), pick(c))}>
              {c.label} <span class="muted">{c.hint}</span>
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
          aria-controls={commands.length ? commandListId : candidates.length ? listId : undefined}
          aria-activedescendant={commands.length ? `${commandListId}-${Math.min(active, commands.length - 1)}` : candidates.length ? `${listId}-${active}` : undefined}
          onInput={(e) => {
            const value = e.currentTarget.value;
            setText(value);
            const m = /(?:^|\s)@([^\s@]*)$/.exec(value.slice(0, e.currentTarget.selectionStart));
            setQuery(m ? m[1]! : null);
            setActive(0);
            if (value.trim()) client.typing(conversationId);
          }}
          onKeyDown={(e) => {
            if (commands.length) {
              const at = Math.min(active, commands.length - 1);
              if (e.key === 'ArrowDown') return (e.preventDefault(), setActive((at + 1) % commands.length));
              if (e.key === 'ArrowUp') return (e.preventDefault(), setActive((at - 1 + commands.length) % commands.length));
              // Enter on a name typed in full invokes it (below); else Enter or Tab completes the chosen one.
              const typedInFull = e.key === 'Enter' && text.trim() === `/${commands[at]!.name}`;
              if ((e.key === 'Enter' && !typedInFull) || e.key === 'Tab') return (e.preventDefault(), pickCommand(commands[at]!));
            }
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
        {/* Level 3: "Schedule for later" beside Send (ui/schedule-send.tsx). */}
        {client.store.features.later ? <ScheduleSend conversationId={conversationId} threadId={threadId} text={text} onScheduled={() => (setText(''), saveDraft(client.storage, storageKey, ''))} /> : null}
      </div>
    </form>
  );
}
