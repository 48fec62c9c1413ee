// A conversation's pinned messages (feature level 3), newest pin first, as a
// side panel: opening one jumps to it where it lives; members unpin from here.
// Kept up to date by message.pinned / message.unpinned (lib/team-chat.ts).
// Loaded on first open (chat.tsx), so it costs the first load nothing.
import { useEffect, useState } from 'preact/hooks';
import { errorMessage } from '../lib/api.js';
import { relativeTime } from '../lib/rows.js';
import { isArchived } from '../lib/team-chat.js';
import type { Message } from '../lib/types.js';
import { displayName, useStore } from './context.js';
import { EmojiText } from './emoji-glyph.js';
import { Icon } from './icons.js';
import { plainText } from './markdown.js';
import { mayPin, pinErrorMessage } from './pins.js';

/** Where the panel covers the conversation (styles.css): it closes once a pin is opened, so the message shows. */
const NARROW = '(max-width: 760px)';

export default function PinsPanel({ conversationId, onClose, onJump }: { conversationId: string; onClose(): void; onJump(m: Message): void }) {
  const client = useStore();
  const s = client.store;
  const [error, setError] = useState<string | null>(null);
  useEffect(() => void client.team.loadPins(conversationId).then(() => setError(null), (err) => setError(errorMessage(err))), [conversationId]);
  const pins = s.team.pins.get(conversationId);
  const canUnpin = mayPin(client, conversationId) && !isArchived(s.channels.get(conversationId));
  return (
    <aside class="panel pins-panel" aria-label="Pinned messages">
      <header>
        <h2>Pinned</h2>
        <button class="icon" aria-label="Close pinned messages" onClick={onClose}><Icon name="close" /></button>
      </header>
      {error ? <p class="error" role="alert">{error}</p> : null}
      {!pins && !error ? <div class="skeleton line w80" role="status" aria-label="Loading the pinned messages" /> : null}
      {pins?.length === 0 ? <p class="muted empty-pins">Nothing is pinned here yet. Pin a message from its actions to keep it at hand.</p> : null}
      <ul class="pins">
        {pins?.map((m) => {
          const author = m.display?.username || displayName(m.author_id ? s.users.get(m.author_id) : null);
          const text = plainText(m.content, m.content_json, (id, label) => displayName(s.users.get(id)) || label).slice(0, 200);
          return (
            <li key={m.id}>
              <button class="pin-open" onClick={() => (onJump(m), matchMedia(NARROW).matches && onClose())}>
                <span class="pin-meta">
                  <strong>{author}</strong> <time dateTime={m.created_at}>{relativeTime(m.created_at)}</time>
                </span>
                <span class="pin-text"><EmojiText text={text} /></span>
              </button>
              {canUnpin ? (
                <button class="btn small" aria-label={`Unpin the message of ${author}`} onClick={() => void client.team.unpin(m).then(() => setError(null), (err) => setError(pinErrorMessage(err)))}>
                  Unpin
                </button>
              ) : null}
            </li>
          );
        })}
      </ul>
    </aside>
  );
}
