// Level 3 (contract §12): owners and admins invite people by link. The link
// carries its token in the fragment and is shown once, to copy.
import { useEffect, useState } from 'preact/hooks';
import { all, data, errorMessage, page } from '../lib/api.js';
import type { components } from '../lib/api-schema.js';
import type { Role } from '../lib/types.js';
import { useStore } from './context.js';
import { ShownOnce } from './copy-button.js';

type Invite = components['schemas']['Invite'];

export function Invites() {
  const client = useStore();
  const [invites, setInvites] = useState<Invite[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [role, setRole] = useState<Role>('member');
  const [hours, setHours] = useState('168');
  const [email, setEmail] = useState('');
  const [link, setLink] = useState<string | null>(null);
  const load = () => all((cursor) => page(client.api.GET('/api/v1/invites', { params: { query: { cursor, limit: 200 } } }))).then(setInvites, (err) => setError(errorMessage(err)));
  useEffect(() => void load(), []);
  const run = (fn: () => Promise<unknown>) => void fn().then(() => (setError(null), load()), (err) => setError(errorMessage(err)));
  const create = (e: Event) => {
    e.preventDefault();
    run(async () => {
      const made = await data(client.api.POST('/api/v1/invites', { body: { role, expires_in_hours: Number(hours), ...(email.trim() ? { email: email.trim() } : {}) } }));
      // An invite for one address carries it in the link's fragment, so the welcome page fills it in (the server checks it).
      setLink(email.trim() ? `${made.url}&email=${encodeURIComponent(email.trim())}` : made.url);
      setEmail('');
    });
  };
  const owner = client.store.me?.role === 'owner';
  return (
    <div class="invites">
      <h2>Invite people</h2>
      <p class="muted">A link that lets one person create their account and sign in. It works once.</p>
      {link ? (
        <ShownOnce value={link} testId="invite-link" copyLabel="Copy the invite link" onDone={() => setLink(null)}>
          <strong>The invite link.</strong> It is shown only once: copy it now and send it to the person.
        </ShownOnce>
      ) : null}
      <form class="row" onSubmit={create} aria-label="Create an invite link">
        <label>
          Role
          <select value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
            <option value="member">member</option>
            <option value="admin">admin</option>
            {owner ? <option value="owner">owner</option> : null}
          </select>
        </label>
        <label>
          Expires
          <select value={hours} onChange={(e) => setHours(e.currentTarget.value)}>
            <option value="24">in a day</option>
            <option value="168">in 7 days</option>
            <option value="720">in 30 days</option>
          </select>
        </label>
        <label>
          Only for <input type="email" placeholder="any email" value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        </label>
        <button class="btn btn-primary" type="submit">Create invite link</button>
      </form>
      {error ? <p class="error" role="alert">{error}</p> : null}
      {invites?.length ? (
        <table class="table">
          <thead>
            <tr>
              <th scope="col">Role</th>
              <th scope="col">For</th>
              <th scope="col">Expires</th>
              <th scope="col" />
            </tr>
          </thead>
          <tbody>
            {invites.map((i) => (
              <tr key={i.id}>
                <td>{i.role}</td>
                <td>{i.email ?? <span class="muted">anyone with the link</span>}</td>
                <td>{new Date(i.expires_at).toLocaleString()}</td>
                <td>
                  <button class="btn small btn-danger" aria-label={`Revoke the invite for ${i.email ?? i.role}`} onClick={() => run(() => data(client.api.DELETE('/api/v1/invites/{invite_id}', { params: { path: { invite_id: i.id } } })))}>
                    Revoke
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : invites ? (
        <p class="muted">No open invites.</p>
      ) : null}
    </div>
  );
}
