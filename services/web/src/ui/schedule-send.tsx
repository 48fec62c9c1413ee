// "Schedule for later" on the composer (level 3, docs/team-chat.md): the
// button beside Send opens the choices (tomorrow at 9, Monday at 9, a custom
// time); the message goes to the API with `send_at` and the worker posts it
// then. Above the composer, the conversation's scheduled messages are counted,
// with the way to the list of all (ui/later.tsx).
import { lazy, Suspense } from 'preact/compat';
import { useEffect, useState } from 'preact/hooks';
import { schedulePresets, scheduledList, whenLabel } from '../lib/later.js';
import { mentionDoc, mentionedIn } from '../lib/mentions.js';
import { useStore } from './context.js';
import { Dialog } from './dialog.js';
import { Icon } from './icons.js';
import { WhenPicker } from './when-picker.js';

const LaterDialog = lazy(() => import('./later.js').then((m) => m.LaterDialog));

/** The list of all scheduled messages and reminders, loaded when first opened. */
export function LaterView({ onClose, initialTab }: { onClose(): void; initialTab?: 'scheduled' | 'reminders' }) {
  return (
    <Suspense fallback={null}>
      <LaterDialog onClose={onClose} initialTab={initialTab} />
    </Suspense>
  );
}

/** The button beside Send; `onScheduled` empties the composer. */
export function ScheduleSend({ conversationId, threadId, text, onScheduled }: { conversationId: string; threadId: string | null; text: string; onScheduled(): void }) {
  const client = useStore();
  const [open, setOpen] = useState(false);
  const [done, setDone] = useState<string | null>(null);
  const schedule = async (at: Date) => {
    const content = text.trim();
    // Mentions become mention nodes, as a message sent now (composer.tsx).
    const doc = mentionDoc(content, mentionedIn(content, client.store.users.values()));
    const m = await scheduledList(client).schedule(conversationId, { content, content_json: doc, ...(threadId ? { thread_id: threadId } : {}) }, at);
    setOpen(false);
    setDone(`Scheduled for ${whenLabel(m.send_at)}.`);
    onScheduled();
  };
  return (
    <>
      <button type="button" class="btn btn-primary schedule-btn" aria-label="Schedule for later" title="Schedule for later" disabled={!text.trim()} onClick={() => (setDone(null), setOpen(true))}>
        <Icon name="chevronDown" />
      </button>
      <span class="sr-only" role="status">{done}</span>
      {open ? (
        <Dialog title="Schedule message" onClose={() => setOpen(false)} class="when-dialog">
          <WhenPicker presets={schedulePresets()} onPick={schedule} customLabel="Schedule message" />
        </Dialog>
      ) : null}
    </>
  );
}

/** "2 scheduled messages · See all" above a conversation's composer; the list refreshes as their times pass. */
export function ScheduledIndicator({ conversationId, threadId }: { conversationId: string; threadId: string | null }) {
  const client = useStore();
  const list = scheduledList(client);
  const [all, setAll] = useState(false);
  useEffect(() => void list.load().catch(() => undefined), []);
  const here = list.pending(conversationId).filter((m) => m.thread_id === threadId);
  // Once the next one is due, the worker posts it (within seconds): ask again then.
  const next = here[0]?.send_at;
  useEffect(() => {
    if (!next) return;
    const timer = setTimeout(() => void list.load(true).catch(() => undefined), Math.max(0, Date.parse(next) - Date.now()) + 5_000);
    return () => clearTimeout(timer);
  }, [next]);
  return (
    <>
      {here.length ? (
        <p class="scheduled-note muted">
          <Icon name="clock" size={14} /> {here.length === 1 ? `1 message scheduled for ${whenLabel(here[0]!.send_at)}` : `${here.length} scheduled messages`} ·{' '}
          <button type="button" class="link" onClick={() => setAll(true)}>See all scheduled messages</button>
        </p>
      ) : null}
      {all ? <LaterView onClose={() => setAll(false)} /> : null}
    </>
  );
}

/** The sidebar's way to the list of all scheduled messages and reminders. */
export function LaterButton() {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button class="btn small later-btn" onClick={() => setOpen(true)}>
        <Icon name="clock" size={14} /> Scheduled and reminders
      </button>
      {open ? <LaterView onClose={() => setOpen(false)} /> : null}
    </>
  );
}
