// Level 3 (contract §12): the person's own password, and a one-time sign-in
// link for another browser (the link carries a code that works once, never a
// key). A password change signs out the person's other browsers.
import { useState } from 'preact/hooks';
import { data, errorMessage } from '../lib/api.js';
import { MIN_PASSWORD } from '../lib/sign-in.js';
import { useStore } from './context.js';
import { CopyButton, ShownOnce } from './copy-button.js';

export function PasswordForm() {
  const client = useStore();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [confirm, setConfirm] = useState('');
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const submit = (e: Event) => {
    e.preventDefault();
    if (next !== confirm) return setMessage({ ok: false, text: 'The two new passwords differ.' });
    void data(client.api.PATCH('/api/v1/users/me', { body: { password: next, ...(current ? { current_password: current } : {}) } })).then(
      () => (setCurrent(''), setNext(''), setConfirm(''), setMessage({ ok: true, text: 'Password changed. Your other browsers are signed out.' })),
      (err) => setMessage({ ok: false, text: errorMessage(err) }),
    );
  };
  return (
    <form class="form password-form" onSubmit={submit} aria-label="Change your password">
      <h2>Password</h2>
      <label>
        Current password <span class="muted small">(empty if you never set one)</span>
        <input type="password" autoComplete="current-password" value={current} onInput={(e) => setCurrent(e.currentTarget.value)} />
      </label>
      <label>
        New password
        <input type="password" autoComplete="new-password" required minLength={MIN_PASSWORD} maxLength={256} value={next} onInput={(e) => setNext(e.currentTarget.value)} />
      </label>
      <label>
        Repeat the new password
        <input type="password" autoComplete="new-password" required value={confirm} onInput={(e) => setConfirm(e.currentTarget.value)} />
      </label>
      {message ? <p class={message.ok ? 'ok' : 'error'} role={message.ok ? 'status' : 'alert'}>{message.text}</p> : null}
      <button class="btn btn-primary" type="submit">Change password</button>
    </form>
  );
}

export function SignInLink() {
  const client = useStore();
  const [link, setLink] = useState<{ url: string; expires_at: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const make = () => void data(client.api.POST('/api/v1/auth/links')).then((l) => (setLink(l), setError(null)), (err) => setError(errorMessage(err)));
  return (
    <div class="signin-link">
      <h2>Sign in on another device</h2>
      <p class="muted">A link that signs you in once, within 10 minutes. It holds no key.</p>
      {link ? (
        <ShownOnce value={link.url} testId="signin-link" copyLabel="Copy the sign-in link" onDone={() => setLink(null)} />
      ) : (
        <button class="btn" onClick={make}>Make a sign-in link</button>
      )}
      {error ? <p class="error" role="alert">{error}</p> : null}
    </div>
  );
}

/** An owner's or admin's answer to a forgotten password: a one-time link (24 h) the person sets a new one with. */
export function PasswordResetLink({ userId, name }: { userId: string; name: string }) {
  const client = useStore();
  const [url, setUrl] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const make = () =>
    void data(client.api.POST('/api/v1/workspaces/current/members/{user_id}/password-reset', { params: { path: { user_id: userId } } })).then(
      (l) => (setUrl(l.url), setError(null)),
      (err) => setError(errorMessage(err)),
    );
  if (url)
    return (
      <span class="reset-link">
        <code class="secret-value" data-testid="reset-link">{url}</code>
        <CopyButton text={url} label={`Copy the password-reset link of ${name}`} />
      </span>
    );
  return (
    <>
      <button class="btn small" aria-label={`Password-reset link for ${name}`} onClick={make}>Reset link</button>
      {error ? <span class="error" role="alert">{error}</span> : null}
    </>
  );
}
