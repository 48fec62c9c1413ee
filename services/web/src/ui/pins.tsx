// Pins on a message (feature level 3, docs/team-chat.md): the toolbar's
// Pin / Unpin button and the "Pinned by" mark. The conversation's list of
// pins is ui/pins-panel.tsx, loaded when first opened.
import { errorMessage } from '../lib/api.js';
import type { ShownMessage } from '../lib/store.js';
import { displayName, useClient } from './context.js';
import { Icon } from './icons.js';

/** Whether the signed-in person may pin in this conversation: its members (a DM's are all members). */
export function mayPin(client: ReturnType<typeof useClient>, conversationId: string) {
  const s = client.store;
  return s.features.teamChat && (s.dms.has(conversationId) || s.memberOf.has(conversationId));
}

/** The API's words for a full board are for developers; these are for people. */
export function pinErrorMessage(err: unknown) {
  return (err as { code?: string }).code === 'conflict' ? 'This conversation has 100 pinned messages, the most it can have: unpin one first.' : errorMessage(err);
}

export function PinButton({ message, onError }: { message: ShownMessage; onError(text: string | null): void }) {
  const client = useClient();
  if (!mayPin(client, message.channel_id)) return null;
  const pinned = Boolean(message.pinned_at);
  const run = () => void (pinned ? client.team.unpin(message) : client.team.pin(message)).then(() => onError(null), (err) => onError(pinErrorMessage(err)));
  return (
    <button tabIndex={-1} aria-label={pinned ? 'Unpin message' : 'Pin message'} title={pinned ? 'Unpin' : 'Pin to this conversation'} aria-pressed={pinned} onClick={run}>
      <Icon name="pin" />
    </button>
  );
}

export function PinnedMark({ message }: { message: ShownMessage }) {
  const client = useClient();
  const by = message.pinned_by ? client.store.users.get(message.pinned_by) : undefined;
  return (
    <p class="pinned-mark">
      <Icon name="pin" size={12} /> Pinned{by ? ` by ${displayName(by)}` : ''}
    </p>
  );
}
