// Settings of a team's chat (feature level 3, docs/team-chat.md), loaded when
// their tab is first opened (settings.tsx): user groups (everyone sees them;
// owners and admins create, edit, set members, delete) and custom emoji
// (anyone adds one; its creator, admins and owners delete it).
import { useEffect, useState } from 'preact/hooks';
import { errorMessage } from '../lib/api.js';
import { customEmojiSrc } from '../lib/custom-emoji.js';
import { emojiNameProblem, groupHandleProblem, type UserGroup } from '../lib/team-chat.js';
import { displayName, useStore } from './context.js';
import { CustomEmojiImage } from './emoji-glyph.js';

const errorOf = (err: unknown) => errorMessage(err);

export function UserGroups() {
  const client = useStore();
  const s = client.store;
  const admin = client.isAdmin();
  const [editing, setEditing] = useState<UserGroup | 'new' | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => void client.team.loadGroups().catch((err) => setError(errorOf(err))), []);
  const groups = [...s.team.groups.values()].sort((a, b) => a.handle.localeCompare(b.handle));
  const remove = (g: UserGroup) => {
    if (!confirm(`Delete the group @${g.handle}? Its handle stops mentioning anyone.`)) return;
    void client.team.deleteGroup(g.id).then(() => setError(null), (err) => setError(errorOf(err)));
  };
  return (
    <>
      <h2>User groups</h2>
      <p class="muted">
        Write <code>@handle</code> in a message to mention every member of a group who can read the conversation.
        {admin ? '' : ' Owners and admins create and change groups.'}
      </p>
      {admin && editing === null ? (
        <button class="btn btn-primary" onClick={() => setEditing('new')}>New group</button>
      ) : null}
      {editing === 'new' ? <GroupForm onDone={() => setEditing(null)} /> : null}
      {error ? <p class="error" role="alert">{error}</p> : null}
      <ul class="groups" aria-label="User groups">
        {groups.map((g) =>
          editing !== 'new' && editing?.id === g.id ? (
            <li key={g.id}>
              <GroupForm group={g} onDone={() => setEditing(null)} />
            </li>
          ) : (
            <li key={g.id} class="card group">
              <div>
                <strong>@{g.handle}</strong> <span>{g.name}</span>
                {g.description ? <p class="muted">{g.description}</p> : null}
                <p class="muted">
                  {g.member_ids.length ? g.member_ids.map((id) => displayName(s.users.get(id))).join(', ') : 'No members yet.'}
                </p>
              </div>
              {admin ? (
                <div class="row">
                  <button class="btn small" aria-label={`Edit @${g.handle}`} onClick={() => setEditing(g)}>Edit</button>
                  <button class="btn small btn-danger" aria-label={`Delete @${g.handle}`} onClick={() => remove(g)}>Delete</button>
                </div>
              ) : null}
            </li>
          ),
        )}
        {groups.length === 0 ? <li class="muted">No groups yet.</li> : null}
      </ul>
    </>
  );
}

/** Creates a group, or edits one (its handle, name and description with PATCH, its members with PUT). */
function GroupForm({ group, onDone }: { group?: UserGroup; onDone(): void }) {
  const client = useStore();
  const [handle, setHandle] = useState(group?.handle ?? '');
  const [name, setName] = useState(group?.name ?? '');
  const [description, setDescription] = useState(group?.description ?? '');
  const [members, setMembers] = useState(new Set(group?.member_ids ?? []));
  const [filter, setFilter] = useState('');
  const [touched, setTouched] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const problem = groupHandleProblem(handle) ?? (name.trim() ? null : 'Give the group a name.');
  const people = [...client.store.users.values()]
    .filter((u) => `${u.name} ${displayName(u)}`.toLowerCase().includes(filter.toLowerCase()))
    .sort((a, b) => displayName(a).localeCompare(displayName(b)));
  const id = group?.id ?? 'new';
  const submit = async (e: Event) => {
    e.preventDefault();
    setTouched(true);
    if (problem) return;
    try {
      const ids = [...members];
      if (!group) await client.team.createGroup({ handle, name, ...(description ? { description } : {}), member_ids: ids });
      else {
        const patch = { ...(handle !== group.handle ? { handle } : {}), ...(name !== group.name ? { name } : {}), ...(description !== group.description ? { description } : {}) };
        if (Object.keys(patch).length) await client.team.updateGroup(group.id, patch);
        const same = ids.length === group.member_ids.length && ids.every((x) => group.member_ids.includes(x));
        if (!same) await client.team.setGroupMembers(group.id, ids);
      }
      onDone();
    } catch (err) {
      setError(errorOf(err));
    }
  };
  return (
    <form class="form card group-form" onSubmit={submit} noValidate aria-label={group ? `Edit @${group.handle}` : 'New group'}>
      <label>
        Handle (mentioned as @handle)
        <input data-autofocus value={handle} aria-invalid={touched && groupHandleProblem(handle) ? 'true' : undefined} aria-describedby={`group-problem-${id}`} onInput={(e) => (setHandle(e.currentTarget.value.toLowerCase()), setTouched(true))} />
      </label>
      <label>
        Name
        <input value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <p id={`group-problem-${id}`} class={touched && problem ? 'error' : 'sr-only'} aria-live="polite">{touched ? problem ?? '' : ''}</p>
      <label>
        Description
        <input value={description} maxLength={250} onInput={(e) => setDescription(e.currentTarget.value)} />
      </label>
      <fieldset class="choices member-picker">
        <legend>Members ({members.size})</legend>
        <input type="search" aria-label="Filter people" placeholder="Filter people" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
        <div class="member-choices">
          {people.map((u) => (
            <label key={u.id} class="check">
              <input
                type="checkbox"
                checked={members.has(u.id)}
                onChange={(e) => {
                  const next = new Set(members);
                  if (e.currentTarget.checked) next.add(u.id);
                  else next.delete(u.id);
                  setMembers(next);
                }}
              />{' '}
              {displayName(u)} <span class="muted">@{u.name}</span>
            </label>
          ))}
        </div>
      </fieldset>
      {error ? <p class="error" role="alert">{error}</p> : null}
      <div class="row">
        <button class="btn" type="button" onClick={onDone}>Cancel</button>
        <button class="btn btn-primary" type="submit">{group ? 'Save' : 'Create group'}</button>
      </div>
    </form>
  );
}

/** How long to wait for the worker to store an upload before asking again (its `url` is null until then). */
const PROCESSING_POLL_MS = 1_000;

export function CustomEmojiSettings() {
  const client = useStore();
  const list = client.store.team.emoji;
  const [name, setName] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [touched, setTouched] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => void client.team.loadEmoji().catch((err) => setError(errorOf(err))), []);
  // An upload shows as "Processing…" until the worker has stored it: asked again until it has (at most a minute).
  const processing = list.some((e) => !e.url);
  const [polls, setPolls] = useState(0);
  useEffect(() => {
    if (!processing || polls > 60) return;
    const t = setTimeout(() => void client.team.loadEmoji().finally(() => setPolls((n) => n + 1)), PROCESSING_POLL_MS);
    return () => clearTimeout(t);
  }, [processing, polls]);
  const problem = emojiNameProblem(name) ?? (file ? null : 'Choose an image (PNG, GIF, JPEG or WebP, at most 256 KB).');
  const submit = async (e: Event) => {
    e.preventDefault();
    setTouched(true);
    if (problem || !file) return;
    setBusy(true);
    try {
      await client.team.addEmoji(name, file);
      setName('');
      setFile(null);
      setTouched(false);
      setPolls(0);
      (e.target as HTMLFormElement).reset();
      setError(null);
    } catch (err) {
      setError(errorOf(err));
    } finally {
      setBusy(false);
    }
  };
  const remove = (emoji: string) => {
    if (!confirm(`Delete :${emoji}:? Messages and reactions that use it show its name instead.`)) return;
    void client.team.removeEmoji(emoji).then(() => setError(null), (err) => setError(errorOf(err)));
  };
  return (
    <>
      <h2>Custom emoji</h2>
      <p class="muted">Add your team's own emoji: use them as <code>:name:</code> in messages, in reactions and from the emoji picker's Custom section.</p>
      <form class="form emoji-form" onSubmit={submit} noValidate aria-label="Add a custom emoji">
        <label>
          Name
          <input value={name} placeholder="partyparrot" aria-invalid={touched && emojiNameProblem(name) ? 'true' : undefined} aria-describedby="emoji-problem" onInput={(e) => setName(e.currentTarget.value.toLowerCase())} />
        </label>
        <label>
          Image
          <input
            type="file"
            accept="image/png,image/gif,image/jpeg,image/webp"
            onChange={(e) => {
              const f = e.currentTarget.files?.[0] ?? null;
              setFile(f);
              // The file's name, as a name the API takes, when none is typed yet.
              if (f && !name) setName(f.name.replace(/\.[^.]*$/, '').toLowerCase().replace(/[^a-z0-9_+-]+/g, '_').slice(0, 64));
            }}
          />
        </label>
        <p id="emoji-problem" class={touched && problem ? 'error' : 'sr-only'} aria-live="polite">{touched ? problem ?? '' : ''}</p>
        {error ? <p class="error" role="alert">{error}</p> : null}
        <div class="row">
          <button class="btn btn-primary" type="submit" disabled={busy}>{busy ? 'Uploading…' : 'Add emoji'}</button>
        </div>
      </form>
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Emoji</th>
              <th scope="col">Name</th>
              <th scope="col">Added by</th>
              <th scope="col">Added</th>
              <th scope="col"><span class="sr-only">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            {list.map((e) => {
              const src = customEmojiSrc(e.name);
              return (
                <tr key={e.name}>
                  <td>{src ? <CustomEmojiImage name={e.name} src={src} /> : <span class="muted" role="status">Processing…</span>}</td>
                  <td><code>:{e.name}:</code></td>
                  <td>{e.created_by ? displayName(client.store.users.get(e.created_by)) : 'Unknown'}</td>
                  <td>{new Date(e.created_at).toLocaleDateString()}</td>
                  <td>
                    {client.team.mayRemoveEmoji(e) ? (
                      <button class="btn small btn-danger" aria-label={`Delete :${e.name}:`} onClick={() => remove(e.name)}>Delete</button>
                    ) : null}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      {list.length === 0 ? <p class="muted">No custom emoji yet.</p> : null}
    </>
  );
}
