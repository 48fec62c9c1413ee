// The list of one's scheduled messages and reminders (level 3): change a
// scheduled message's text or time, send it now or delete it; delete a
// reminder not sent yet. Loaded lazily (ui/schedule-send.tsx's LaterView).
import { useEffect, useRef, useState } from 'preact/hooks';
import { errorMessage } from '../lib/api.js';
import { fromLocalInput, localInputValue, reminders, scheduledList, timeProblem, whenLabel, type Reminder, type ScheduledMessage } from '../lib/later.js';
import { conversationPath, messagePath, openPath as go } from '../lib/routes.js';
import { conversationTitle, useStore } from './context.js';
import { Dialog } from './dialog.js';

type Tab = 'scheduled' | 'reminders';

export function LaterDialog({ onClose, initialTab = 'scheduled' }: { onClose(): void; initialTab?: Tab }) {
  const [tab, setTab] = useState<Tab>(initialTab);
  const tabs: [Tab, string][] = [['scheduled', 'Scheduled messages'], ['reminders', 'Reminders']];
  // A deleted or sent item takes its focused button with it: focus goes to the panel, so it stays in the dialog (Escape, Tab).
  const panel = useRef<HTMLElement>(null);
  const refocus = () => panel.current?.focus();
  return (
    <Dialog title="Scheduled messages and reminders" onClose={onClose} wide class="later-dialog">
      <div class="tabs" role="tablist" aria-label="Later">
        {tabs.map(([id, label]) => (
          <button key={id} role="tab" id={`later-tab-${id}`} aria-selected={tab === id} aria-controls={`later-${id}`} class={tab === id ? 'active' : ''} onClick={() => setTab(id)}>
            {label}
          </button>
        ))}
      </div>
      <section ref={panel} tabIndex={-1} role="tabpanel" id={`later-${tab}`} aria-labelledby={`later-tab-${tab}`} class="later-panel">
        {tab === 'scheduled' ? <ScheduledMessages onClose={onClose} onGone={refocus} /> : <Reminders onClose={onClose} onGone={refocus} />}
      </section>
    </Dialog>
  );
}

function ScheduledMessages({ onClose, onGone }: { onClose(): void; onGone(): void }) {
  const client = useStore();
  const list = scheduledList(client);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => void list.load(true).catch((err) => setError(errorMessage(err))), []);
  const pending = list.pending();
  const failed = list.failed();
  return (
    <>
      {error ? <p class="error" role="alert">{error}</p> : null}
      {list.items === null && !error ? <div class="skeleton line w80" role="status" aria-label="Loading scheduled messages" /> : null}
      {list.items !== null && !pending.length && !failed.length ? <p class="muted">Nothing scheduled. Use the arrow beside Send to schedule a message.</p> : null}
      <ul class="later-list">
        {pending.map((m) => (
          <ScheduledItem key={m.id} m={m} onClose={onClose} onGone={onGone} />
        ))}
      </ul>
      {failed.length ? (
        <>
          <h3>Not sent</h3>
          <ul class="later-list">
            {failed.map((m) => (
              <li key={m.id} class="later-item">
                <Where conversationId={m.conversation_id} threadId={m.thread_id} onClose={onClose} />
                <p class="later-text">{m.content}</p>
                <p class="error">Not sent at {whenLabel(m.send_at)}: {m.error ?? 'it could not be posted'}.</p>
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </>
  );
}

function Where({ conversationId, threadId, onClose }: { conversationId: string; threadId: string | null; onClose(): void }) {
  const client = useStore();
  const known = client.store.isConversation(conversationId);
  const title = known ? conversationTitle(client, conversationId) : 'a conversation you left';
  const path = threadId ? messagePath(conversationId, threadId) : conversationPath(conversationId);
  return (
    <span class="later-where">
      {known ? (
        <a href={path} onClick={(e) => (e.preventDefault(), onClose(), go(path))}>
          {title}
        </a>
      ) : (
        title
      )}
      {threadId ? <span class="muted"> (in a thread)</span> : null}
    </span>
  );
}

function ScheduledItem({ m, onClose, onGone }: { m: ScheduledMessage; onClose(): void; onGone(): void }) {
  const client = useStore();
  const list = scheduledList(client);
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState(m.content);
  const [when, setWhen] = useState(localInputValue(new Date(m.send_at)));
  const [error, setError] = useState<string | null>(null);
  const run = (fn: () => Promise<unknown>) => void fn().then(() => setError(null), (err) => setError(errorMessage(err)));
  const save = (e: Event) => {
    e.preventDefault();
    const at = fromLocalInput(when);
    const moved = at && at.getTime() !== new Date(m.send_at).getTime();
    const problem = moved ? timeProblem(at) : null;
    if (problem) return setError(problem);
    if (!text.trim()) return setError('Write something, or delete the message.');
    run(async () => {
      await list.update(m.id, { ...(text.trim() !== m.content ? { content: text.trim() } : {}), ...(moved ? { send_at: at.toISOString() } : {}) });
      setEditing(false);
    });
  };
  const label = `Scheduled message to ${client.store.isConversation(m.conversation_id) ? conversationTitle(client, m.conversation_id) : 'a conversation'}`;
  return (
    <li class="later-item" aria-label={label}>
      <div class="later-head">
        <Where conversationId={m.conversation_id} threadId={m.thread_id} onClose={onClose} />
        <time class="muted" dateTime={m.send_at} title={new Date(m.send_at).toLocaleString()}>{whenLabel(m.send_at)}</time>
      </div>
      {editing ? (
        <form class="form" onSubmit={save}>
          <label>
            Message
            <textarea value={text} rows={3} onInput={(e) => setText(e.currentTarget.value)} />
          </label>
          <label>
            Send at
            <input type="datetime-local" required value={when} onInput={(e) => setWhen(e.currentTarget.value)} />
          </label>
          <div class="row">
            <button class="btn" type="button" onClick={() => (setEditing(false), setText(m.content), setWhen(localInputValue(new Date(m.send_at))))}>Cancel</button>
            <button class="btn btn-primary" type="submit">Save</button>
          </div>
        </form>
      ) : (
        <p class="later-text">{m.content}</p>
      )}
      {error ? <p class="error" role="alert">{error}</p> : null}
      {editing ? null : (
        <div class="row">
          <button class="btn small" onClick={() => setEditing(true)}>Edit</button>
          <button class="btn small" onClick={() => run(() => (onGone(), list.sendNow(m)))}>Send now</button>
          <button class="btn small btn-danger" onClick={() => confirm('Delete this scheduled message?') && run(() => (onGone(), list.remove(m.id)))}>Delete</button>
        </div>
      )}
    </li>
  );
}

function Reminders({ onClose, onGone }: { onClose(): void; onGone(): void }) {
  const client = useStore();
  const [items, setItems] = useState<Reminder[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = () => reminders.list(client).then((r) => (setItems(r), setError(null)), (err) => setError(errorMessage(err)));
  useEffect(() => void load(), []);
  const upcoming = (items ?? []).filter((r) => r.status === 'scheduled').sort((a, b) => a.remind_at.localeCompare(b.remind_at));
  const past = (items ?? []).filter((r) => r.status !== 'scheduled');
  const remove = (r: Reminder) => (onGone(), void reminders.remove(client, r.id).then(load, (err) => setError(errorMessage(err))));
  const about = (r: Reminder) =>
    r.message_id && r.conversation_id ? (
      <a href={messagePath(r.conversation_id, r.message_id)} onClick={(e) => (e.preventDefault(), onClose(), go(messagePath(r.conversation_id!, r.message_id!)))}>
        A message in {client.store.isConversation(r.conversation_id) ? conversationTitle(client, r.conversation_id) : 'a conversation'}
      </a>
    ) : (
      <span class="later-text">{r.text}</span>
    );
  return (
    <>
      {error ? <p class="error" role="alert">{error}</p> : null}
      {items === null && !error ? <div class="skeleton line w80" role="status" aria-label="Loading reminders" /> : null}
      {items !== null && !items.length ? <p class="muted">No reminders. Choose “Remind me” on a message to get one.</p> : null}
      <ul class="later-list">
        {upcoming.map((r) => (
          <li key={r.id} class="later-item" aria-label={`Reminder ${whenLabel(r.remind_at)}`}>
            <div class="later-head">
              {about(r)}
              <time class="muted" dateTime={r.remind_at} title={new Date(r.remind_at).toLocaleString()}>{whenLabel(r.remind_at)}</time>
            </div>
            <div class="row">
              <button class="btn small btn-danger" onClick={() => remove(r)}>Delete</button>
            </div>
          </li>
        ))}
      </ul>
      {past.length ? (
        <>
          <h3>Past</h3>
          <ul class="later-list">
            {past.map((r) => (
              <li key={r.id} class="later-item muted-item">
                <div class="later-head">
                  {about(r)}
                  <span class="muted">{r.status === 'sent' ? `Sent ${whenLabel(r.remind_at)}` : `Not sent: ${r.error ?? 'failed'}`}</span>
                </div>
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </>
  );
}
