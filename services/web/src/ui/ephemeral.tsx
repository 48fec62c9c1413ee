// Messages only this person sees (level 3: message.ephemeral), under the
// conversation or thread they belong to: marked "Only visible to you",
// dismissable, and kept in memory only (a reload forgets them, as in Slack).
import { MessageBody } from './content.js';
import { displayName, useStore } from './context.js';
import { Icon } from './icons.js';

export function EphemeralMessages({ timelineKey }: { timelineKey: string }) {
  const client = useStore();
  const s = client.store;
  const messages = s.ephemeral.get(timelineKey) ?? [];
  if (!messages.length) return null;
  return (
    <ul class="ephemeral-list" aria-label="Only visible to you">
      {messages.map((m) => {
        const name = m.display?.username || displayName(m.author_id ? s.users.get(m.author_id) : null);
        return (
          <li key={m.id} class="ephemeral" data-ephemeral-id={m.id}>
            <p class="ephemeral-head">
              <strong>{name}</strong> <span class="badge">bot</span> <span class="muted">Only visible to you</span>
              <button type="button" class="icon ephemeral-dismiss" aria-label={`Dismiss the message from ${name}`} title="Dismiss" onClick={() => s.dismissEphemeral(timelineKey, m.id)}>
                <Icon name="close" size={14} />
              </button>
            </p>
            <MessageBody message={m} />
          </li>
        );
      })}
    </ul>
  );
}
