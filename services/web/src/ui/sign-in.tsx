// The screens before the chat: sign in (email and password, single sign-on,
// and under "Sign in with an API key" the key form for bots' owners and old
// habits), the welcome page of an invite link, and the page of a
// password-reset link. What they call is in lib/sign-in.ts.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { errorMessage } from '../lib/api.js';
import { MIN_PASSWORD, OIDC_START, acceptInvite, resetPassword, signInMethods, signInWithPassword, type Methods } from '../lib/sign-in.js';
import { useStore } from './context.js';

function useBusy() {
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const run = async (fn: () => Promise<unknown>) => {
    setBusy(true);
    setFailure(null);
    try {
      await fn();
    } catch (err) {
      setFailure(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  return { busy, failure, run };
}

export function SignIn({ error, onSignedIn }: { error: string | null; onSignedIn(): void }) {
  const client = useStore();
  const [methods, setMethods] = useState<Methods | null>(null);
  useEffect(() => void signInMethods(client).then(setMethods, () => setMethods({ password: false, oidc: null })), []);
  if (!methods) return <div class="empty" role="status">Loading…</div>;
  const peopleWays = methods.password || methods.oidc;
  return (
    <main class="signin">
      <div class="card form signin-card">
        <h1>Sign in to Axid</h1>
        {error ? <p class="error" role="alert">{error}</p> : null}
        {methods.password ? <PasswordSignIn onSignedIn={onSignedIn} /> : null}
        {methods.oidc ? (
          <a class="btn sso-btn" href={OIDC_START}>
            Sign in with {methods.oidc.name}
          </a>
        ) : null}
        {peopleWays ? (
          <details class="key-signin">
            <summary>Sign in with an API key</summary>
            <KeySignIn onSignedIn={onSignedIn} label="Sign in with key" />
          </details>
        ) : (
          <KeySignIn onSignedIn={onSignedIn} label="Sign in" />
        )}
      </div>
    </main>
  );
}

function PasswordSignIn({ onSignedIn }: { onSignedIn(): void }) {
  const client = useStore();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const { busy, failure, run } = useBusy();
  const submit = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      await signInWithPassword(client, email, password);
      setPassword('');
      onSignedIn();
    });
  };
  return (
    <form class="form" onSubmit={submit} aria-label="Sign in">
      {failure ? <p class="error" role="alert">{failure}</p> : null}
      <label>
        Email
        <input type="email" autoComplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} autoFocus />
      </label>
      <label>
        Password
        <input type="password" autoComplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
      </label>
      <button class="btn btn-primary" type="submit" disabled={busy}>
        {busy ? 'Signing in…' : 'Sign in'}
      </button>
    </form>
  );
}

function KeySignIn({ onSignedIn, label }: { onSignedIn(): void; label: string }) {
  const client = useStore();
  const [key, setKey] = useState('');
  const { busy, failure, run } = useBusy();
  const submit = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      await client.signIn(key);
      setKey('');
      onSignedIn();
    });
  };
  return (
    <form class="form" onSubmit={submit} aria-label="Sign in with a key">
      <p class="muted">
        Paste an API key (the first one is printed when the server starts). The app creates a key of its own for this browser and does not keep the one you paste.
      </p>
      {failure ? <p class="error" role="alert">{failure}</p> : null}
      <label>
        API key
        <input type="password" autoComplete="off" required value={key} onInput={(e) => setKey(e.currentTarget.value)} />
      </label>
      <button class="btn btn-primary" type="submit" disabled={busy}>
        {busy ? 'Signing in…' : label}
      </button>
    </form>
  );
}

/**
 * The one form a link opens to set a password (an invite's welcome page, a
 * password reset): the fields above it, a new password twice (at least 12
 * characters, the API's rule), and a submit that runs only when both match.
 */
function NewPasswordForm(props: {
  title: string;
  intro: string;
  passwordLabel: string;
  submitLabel: string;
  busyLabel: string;
  onSubmit(password: string): Promise<unknown>;
  children?: ComponentChildren;
}) {
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const { busy, failure, run } = useBusy();
  const [local, setLocal] = useState<string | null>(null);
  const submit = (e: Event) => {
    e.preventDefault();
    const wrong = password !== confirm ? 'The two passwords differ.' : null;
    setLocal(wrong);
    if (!wrong) void run(() => props.onSubmit(password));
  };
  return (
    <main class="signin">
      <form class="card form signin-card" onSubmit={submit} aria-label={props.title}>
        <h1>{props.title}</h1>
        <p class="muted">{props.intro}</p>
        {local || failure ? <p class="error" role="alert">{local ?? failure}</p> : null}
        {props.children}
        <label>
          {props.passwordLabel}
          <input type="password" autoComplete="new-password" required minLength={MIN_PASSWORD} maxLength={256} value={password} onInput={(e) => setPassword(e.currentTarget.value)} autoFocus={!props.children} />
        </label>
        <p class="muted small">At least {MIN_PASSWORD} characters.</p>
        <label>
          Repeat the password
          <input type="password" autoComplete="new-password" required value={confirm} onInput={(e) => setConfirm(e.currentTarget.value)} />
        </label>
        <button class="btn btn-primary" type="submit" disabled={busy}>
          {busy ? props.busyLabel : props.submitLabel}
        </button>
      </form>
    </main>
  );
}

/** The page an invite link opens: the account is made and signed in at once. */
export function InviteWelcome({ token, email: invitedEmail = '', onDone }: { token: string; email?: string; onDone(): void }) {
  const client = useStore();
  const [name, setName] = useState('');
  const [displayName, setDisplayName] = useState('');
  const [email, setEmail] = useState(invitedEmail);
  return (
    <NewPasswordForm
      title="Welcome to Axid"
      intro="You were invited to a workspace. Choose how people see you and a password to sign in with."
      passwordLabel="Password"
      submitLabel="Join and sign in"
      busyLabel="Joining…"
      onSubmit={async (password) => {
        await acceptInvite(client, { token, name: name.trim(), display_name: displayName.trim() || null, email: email.trim(), password });
        onDone();
      }}
    >
      <label>
        User name
        <input required maxLength={80} autoComplete="username" value={name} onInput={(e) => setName(e.currentTarget.value)} autoFocus />
      </label>
      <label>
        Display name <span class="muted small">(optional)</span>
        <input maxLength={80} autoComplete="name" value={displayName} onInput={(e) => setDisplayName(e.currentTarget.value)} />
      </label>
      <label>
        Email
        <input type="email" required autoComplete="email" value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
      </label>
    </NewPasswordForm>
  );
}

/** The page a password-reset link opens (an owner or admin made it). */
export function ResetPassword({ code, onDone }: { code: string; onDone(): void }) {
  const client = useStore();
  return (
    <NewPasswordForm
      title="Choose a new password"
      intro="This link works once. Browsers signed in to your account before are signed out."
      passwordLabel="New password"
      submitLabel="Save and sign in"
      busyLabel="Saving…"
      onSubmit={async (password) => {
        await resetPassword(client, code, password);
        onDone();
      }}
    />
  );
}
