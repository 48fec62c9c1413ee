// The app shell: sign-in (pasted key or a `/#key=...` link), then the chat or
// the settings, routed by path (the server answers every non-API path with
// index.html).
import { useEffect, useState } from 'preact/hooks';
import { errorMessage } from '../lib/api.js';
import { keyFromHash } from '../lib/session.js';
import { Chat } from './chat.js';
import { useStore } from './context.js';
import { Settings } from './settings.js';

function usePath(): [string, (p: string) => void] {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const onPop = () => setPath(location.pathname);
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);
  const navigate = (p: string) => {
    if (p !== location.pathname) history.pushState(null, '', p);
    setPath(p);
  };
  return [path, navigate];
}

export function App() {
  const client = useStore();
  const [path, navigate] = usePath();
  const [ready, setReady] = useState(false);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    // A one-time link carries the key in the fragment: use it, then forget it.
    const linked = keyFromHash(location.hash);
    if (linked) history.replaceState(null, '', location.pathname);
    const begin = linked ? client.signIn(linked) : client.session ? client.start() : Promise.resolve();
    begin.then(
      () => setReady(true),
      (err) => (setError(errorMessage(err)), setReady(true)),
    );
    const online = () => client.reconnectNow();
    const offline = () => client.dropStream();
    window.addEventListener('offline', offline);
    const visible = () => document.visibilityState === 'visible' && client.reconnectNow();
    window.addEventListener('online', online);
    document.addEventListener('visibilitychange', visible);
    return () => (window.removeEventListener('online', online), window.removeEventListener('offline', offline), document.removeEventListener('visibilitychange', visible));
  }, []);

  if (!ready) return <div class="empty" role="status">Loading…</div>;
  if (!client.session || !client.store.me) return <SignIn error={error ?? client.signedOutReason} onSignedIn={() => setError(null)} />;
  if (path === '/settings') return <Settings navigate={navigate} />;
  const m = /^\/c\/([^/]+)$/.exec(path);
  return <Chat conversationId={m ? decodeURIComponent(m[1]!) : null} navigate={navigate} />;
}

function SignIn({ error, onSignedIn }: { error: string | null; onSignedIn(): void }) {
  const client = useStore();
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    try {
      await client.signIn(key);
      setKey('');
      onSignedIn();
    } catch (err) {
      setFailure(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="signin">
      <form class="card form" onSubmit={submit} aria-label="Sign in">
        <h1>Sign in to Axid</h1>
        <p class="muted">
          Paste an API key (the first one is printed when the server starts). The app creates a key of its own for this browser and does not keep the one you paste.
        </p>
        {error || failure ? <p class="error" role="alert">{failure ?? error}</p> : null}
        <label>
          API key
          <input type="password" autoComplete="off" required value={key} onInput={(e) => setKey(e.currentTarget.value)} autoFocus />
        </label>
        <button class="btn btn-primary" type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
