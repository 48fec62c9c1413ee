// People: the members directory (profiles, presence, a DM in one click), the
// "New message" dialog (a DM with one person or a group DM with several), and
// the signed-in person's own profile (display name, avatar through the files
// API). The password form of the profile belongs to the sign-in screens.
import { useState } from 'preact/hooks';
import { errorMessage as plainError } from '../lib/api.js';
import type { User } from '../lib/types.js';
import { displayName, useStore } from './context.js';
import { Dialog } from './dialog.js';
import { Avatar } from './message.js';
import { PresenceDot } from './sidebar.js';

const byName = (a: User, b: User) => displayName(a).localeCompare(displayName(b));

export function PeopleDirectory({ onClose, onOpen }: { onClose(): void; onOpen(id: string): void }) {
  const client = useStore();
  const [q, setQ] = useState('');
  const [error, setError] = useState<string | null>(null);
  const s = client.store;
  const people = [...s.users.values()]
    .filter((u) => `${u.name} ${u.display_name ?? ''}`.toLowerCase().includes(q.toLowerCase()))
    .sort(byName);
  const message = async (u: User) => {
    try {
      const dm = await client.openDm([u.id]);
      onClose();
      onOpen(dm.id);
    } catch (err) {
      setError(plainError(err));
    }
  };
  return (
    <Dialog title="People" onClose={onClose} wide>
      <input type="search" data-autofocus aria-label="Search people" placeholder="Search people" value={q} onInput={(e) => setQ(e.currentTarget.value)} />
      {error ? <p class="error" role="alert">{error}</p> : null}
      <ul class="people" aria-label="Members of the workspace">
        {people.map((u) => (
          <li key={u.id} aria-label={`${displayName(u)}${u.is_agent ? ', bot' : ''}`}>
            <Avatar userId={u.id} />
            <div class="who">
              <strong>{displayName(u)}</strong> {u.is_agent ? <span class="badge">bot</span> : null} <PresenceDot userId={u.id} />
              <div class="muted">@{u.name} · {u.role}</div>
            </div>
            {u.id !== s.me?.id ? (
              <button class="btn small" aria-label={`Message ${displayName(u)}`} onClick={() => void message(u)}>
                Message
              </button>
            ) : (
              <span class="muted">you</span>
            )}
          </li>
        ))}
        {people.length === 0 ? <li class="muted">Nobody matches “{q}”.</li> : null}
      </ul>
    </Dialog>
  );
}

export function NewMessage({ onClose, onOpen }: { onClose(): void; onOpen(id: string): void }) {
  const client = useStore();
  const [q, setQ] = useState('');
  const [chosen, setChosen] = useState<string[]>([]);
  const [error, setError] = useState<string | null>(null);
  const s = client.store;
  const people = [...s.users.values()].filter((u) => u.id !== s.me?.id && `${u.name} ${u.display_name ?? ''}`.toLowerCase().includes(q.toLowerCase())).sort(byName);
  const toggle = (id: string) => setChosen(chosen.includes(id) ? chosen.filter((x) => x !== id) : [...chosen, id]);
  const start = async (e: Event) => {
    e.preventDefault();
    try {
      const dm = await client.openDm(chosen);
      onClose();
      onOpen(dm.id);
    } catch (err) {
      setError(plainError(err));
    }
  };
  return (
    <Dialog title="New message" onClose={onClose}>
      <form class="form" onSubmit={start}>
        <input type="search" data-autofocus aria-label="Find people" placeholder="Find people" value={q} onInput={(e) => setQ(e.currentTarget.value)} />
        <fieldset class="pick-people">
          <legend class="sr-only">People</legend>
          {people.map((u) => (
            <label key={u.id} class="check">
              <input type="checkbox" checked={chosen.includes(u.id)} onChange={() => toggle(u.id)} />
              <Avatar userId={u.id} size={24} /> {displayName(u)} <span class="muted">@{u.name}</span>
              {u.is_agent ? <span class="badge">bot</span> : null}
            </label>
          ))}
          {people.length === 0 ? <p class="muted">Nobody matches “{q}”.</p> : null}
        </fieldset>
        {error ? <p class="error" role="alert">{error}</p> : null}
        <div class="row">
          <button class="btn" type="button" onClick={onClose}>Cancel</button>
          <button class="btn btn-primary" type="submit" disabled={chosen.length === 0}>
            {chosen.length > 1 ? `Start a group message (${chosen.length + 1} people)` : 'Start a direct message'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

export function Profile({ onClose }: { onClose(): void }) {
  const client = useStore();
  const me = client.store.me!;
  const [name, setName] = useState(me.display_name ?? '');
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const run = async (fn: () => Promise<unknown>, done: string) => {
    setBusy(true);
    try {
      await fn();
      setError(null);
      setNote(done);
    } catch (err) {
      setError(plainError(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog title="Your profile" onClose={onClose}>
      <div class="profile-head">
        <Avatar userId={me.id} size={64} />
        <div>
          <strong>{displayName(me)}</strong>
          <div class="muted">@{me.name} · {me.role}</div>
        </div>
      </div>
      <form class="form" onSubmit={(e) => (e.preventDefault(), void run(() => client.updateProfile({ display_name: name.trim() || null }), 'Display name saved.'))}>
        <label>
          Display name
          <input data-autofocus value={name} maxLength={80} onInput={(e) => setName(e.currentTarget.value)} placeholder={me.name} />
        </label>
        <div class="row">
          <button class="btn btn-primary" type="submit" disabled={busy}>Save name</button>
        </div>
      </form>
      <div class="row">
        <label class="btn">
          Upload a picture
          <input
            type="file"
            class="sr-only"
            accept="image/png,image/jpeg,image/gif,image/webp"
            onChange={(e) => {
              const file = e.currentTarget.files?.[0];
              e.currentTarget.value = '';
              if (file) void run(() => client.setAvatar(file), 'Picture saved.');
            }}
          />
        </label>
        {me.avatar_url ? (
          <button class="btn" type="button" disabled={busy} onClick={() => void run(() => client.updateProfile({ avatar_url: null }), 'Picture removed.')}>
            Remove picture
          </button>
        ) : null}
      </div>
      {note ? <p class="muted" role="status">{note}</p> : null}
      {error ? <p class="error" role="alert">{error}</p> : null}
      <div class="row">
        <button class="btn" type="button" onClick={onClose}>Close</button>
      </div>
    </Dialog>
  );
}
