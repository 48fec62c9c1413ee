// "Browse channels" (feature level 3, docs/team-chat.md): every channel the
// person may see, archived ones too (marked), with their member counts; Join
// or Open, and Archive / Unarchive for the workspace's owners and admins and
// the channel's creator. Loaded on first open (chat.tsx).
import { useEffect, useState } from 'preact/hooks';
import { errorMessage } from '../lib/api.js';
import { isArchived } from '../lib/team-chat.js';
import type { Channel } from '../lib/types.js';
import { useStore } from './context.js';
import { Dialog } from './dialog.js';

/** Archiving refuses a default channel with a bare `conflict`: say what to do instead. */
const archiveError = (err: unknown) =>
  (err as { code?: string }).code === 'conflict' ? 'A default channel cannot be archived: make it not default first.' : errorMessage(err);

export default function BrowseChannels({ onClose, onOpen }: { onClose(): void; onOpen(id: string): void }) {
  const client = useStore();
  const [channels, setChannels] = useState<Channel[] | null>(null);
  const [q, setQ] = useState('');
  const [error, setError] = useState<string | null>(null);
  useEffect(() => void client.team.browseChannels().then(setChannels, (err) => setError(errorMessage(err))), []);

  const replace = (c: Channel) => setChannels((list) => list?.map((x) => (x.id === c.id ? { ...x, ...c } : x)) ?? null);
  const open = (c: Channel) => {
    // An archived channel is not in the sidebar's list: the store learns of it so that it opens (read-only).
    if (!client.store.channels.has(c.id)) client.store.upsertChannel(c);
    onClose();
    onOpen(c.id);
  };
  const join = (c: Channel) =>
    void client.addMember(c.id, client.store.me!.id).then(
      () => open({ ...c, is_member: true }),
      (err) => setError(errorMessage(err)),
    );
  const archive = (c: Channel, on: boolean) =>
    void client.team.setArchived(c.id, on).then(
      (updated) => (replace(updated), setError(null)),
      (err) => setError(archiveError(err)),
    );

  const shown = (channels ?? [])
    .filter((c) => c.name.toLowerCase().includes(q.toLowerCase().replace(/^#/, '')))
    .sort((a, b) => Number(isArchived(a)) - Number(isArchived(b)) || a.name.localeCompare(b.name));
  return (
    <Dialog title="Browse channels" onClose={onClose} wide>
      <input type="search" data-autofocus aria-label="Filter channels" placeholder="Filter channels by name" value={q} onInput={(e) => setQ(e.currentTarget.value)} />
      {error ? <p class="error" role="alert">{error}</p> : null}
      {!channels && !error ? <div class="skeleton line w80" role="status" aria-label="Loading the channels" /> : null}
      <ul class="browse-list" aria-label="Channels">
        {shown.map((c) => {
          const archived = isArchived(c);
          const member = c.is_member ?? client.store.memberOf.has(c.id);
          return (
            <li key={c.id} class={archived ? 'archived' : ''}>
              <div class="browse-info">
                <strong>
                  {c.is_private ? '🔒' : '#'}
                  {c.name}
                </strong>{' '}
                {archived ? <span class="tag">archived</span> : null}
                {member && !archived ? <span class="tag">joined</span> : null}
                <span class="muted">
                  {' '}
                  · {c.member_count ?? 0} {c.member_count === 1 ? 'member' : 'members'}
                </span>
                {c.description ? <span class="muted browse-desc">{c.description}</span> : null}
              </div>
              <div class="browse-actions">
                {member || archived ? (
                  <button class="btn small" aria-label={`Open #${c.name}`} onClick={() => open(c)}>Open</button>
                ) : (
                  <button class="btn btn-primary small" aria-label={`Join #${c.name}`} onClick={() => join(c)}>Join</button>
                )}
                {client.team.mayArchive(c) ? (
                  <button class="btn small" aria-label={`${archived ? 'Unarchive' : 'Archive'} #${c.name}`} onClick={() => archive(c, !archived)}>
                    {archived ? 'Unarchive' : 'Archive'}
                  </button>
                ) : null}
              </div>
            </li>
          );
        })}
        {channels && shown.length === 0 ? <li class="muted">{q ? `No channel matches “${q}”.` : 'There is no channel yet.'}</li> : null}
      </ul>
    </Dialog>
  );
}
