// "Remind me" on a message (level 3, docs/team-chat.md): in 20 minutes, in an
// hour, tomorrow at 9, or a time of one's choosing; at that time the system
// agent "Axid" sends a DM linking the message. Its DM shows a small
// "Reminder" line (ReminderNote) above what the API delivered.
import { useState } from 'preact/hooks';
import { reminderPresets, reminders, whenLabel } from '../lib/later.js';
import { messagePath, openPath } from '../lib/routes.js';
import type { ShownMessage } from '../lib/store.js';
import { useClient } from './context.js';
import { Dialog } from './dialog.js';
import { Icon } from './icons.js';
import { WhenPicker } from './when-picker.js';
import { LaterView } from './schedule-send.js';

/** The message toolbar's button (a Tab-less action, reached with the arrow keys like the others). */
export function RemindMeButton({ message }: { message: ShownMessage }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button tabIndex={-1} aria-label="Remind me about this message" title="Remind me" onClick={() => setOpen(true)}>
        <Icon name="clock" />
      </button>
      {open ? <RemindMe message={message} onClose={() => setOpen(false)} /> : null}
    </>
  );
}

function RemindMe({ message, onClose }: { message: ShownMessage; onClose(): void }) {
  const client = useClient();
  const [set, setSet] = useState<string | null>(null);
  const [list, setList] = useState(false);
  if (list) return <LaterView onClose={onClose} initialTab="reminders" />;
  return (
    <Dialog title="Remind me about this message" onClose={onClose} class="when-dialog">
      {set ? (
        <>
          <p role="status">I will remind you {set}.</p>
          <div class="row">
            <button type="button" class="btn" onClick={() => setList(true)}>See all reminders</button>
            <button type="button" class="btn btn-primary" data-autofocus onClick={onClose}>Done</button>
          </div>
        </>
      ) : (
        <WhenPicker
          presets={reminderPresets()}
          customLabel="Set reminder"
          onPick={async (at) => {
            const r = await reminders.create(client, at, { message_id: message.id });
            const when = whenLabel(r.remind_at);
            setSet(/^(Today|Tomorrow)/.test(when) ? when.charAt(0).toLowerCase() + when.slice(1) : `on ${when}`);
          }}
        />
      )}
    </Dialog>
  );
}

/** Above the system agent's reminder DM: what it is, and the message it is about opened in the app (its link in the text is the full address). */
export function ReminderNote({ data }: { data: Record<string, unknown> }) {
  const { conversation_id: conversationId, message_id: messageId } = data;
  const path = typeof conversationId === 'string' && typeof messageId === 'string' ? messagePath(conversationId, messageId) : null;
  return (
    <p class="reminder-note muted">
      <Icon name="clock" size={14} /> Reminder
      {path ? (
        <>
          {' · '}
          <a href={path} onClick={(e) => (e.preventDefault(), openPath(path))}>Open the message</a>
        </>
      ) : null}
    </p>
  );
}
