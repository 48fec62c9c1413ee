// The app shell: sign-in (ui/sign-in.tsx: password, single sign-on, a pasted key,
// a link), then the chat or the settings, routed by path (the server answers
// every non-API path with index.html): `/`, `/settings`, `/c/<conversation>`
// and a message's permalink `/c/<conversation>/m/<message>` (lib/routes.ts).
import { useEffect, useLayoutEffect, useState } from 'preact/hooks';
import { ApiError, errorMessage } from '../lib/api.js';
import { conversationRoute } from '../lib/routes.js';
import { arrivalFromHash, exchangeCode, signInErrorText, type Arrival } from '../lib/sign-in.js';
import { OfflineStart } from './app-update.js';
import { Chat } from './chat.js';
import { consentRequestOf } from '../lib/oauth-consent.js';
import { OAuthConsent } from './oauth-consent.js';
import { useStore } from './context.js';
import { Settings } from './settings.js';
import { InviteWelcome, ResetPassword, SignIn } from './sign-in.js';

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
  // An invite or password-reset link waits for the person's answer (ui/sign-in.tsx).
  const [pending, setPending] = useState<Extract<Arrival, { kind: 'invite' | 'reset' }> | null>(null);
  // Signed in but Axid unreachable at start (the service worker served the shell offline): OfflineStart until it answers.
  const [offline, setOffline] = useState(false);

  // A layout effect: the first API calls go out right after the first render, not a frame later (an effect waits
  // for the next animation frame, which a busy machine delays: under load they went out 150 ms after DOMContentLoaded).
  useLayoutEffect(() => {
    // Links carry a secret in the fragment (a key at level 2; at 3 a one-time
    // code, an invite or a reset code: lib/sign-in.ts): it leaves the address
    // bar at once, then is used.
    const arrival = arrivalFromHash(location.hash);
    if (arrival.kind !== 'none') history.replaceState(null, '', location.pathname + location.search);
    if (arrival.kind === 'invite' || arrival.kind === 'reset') setPending(arrival);
    if (arrival.kind === 'error') setError(signInErrorText(arrival.code));
    const begin =
      arrival.kind === 'key'
        ? client.signIn(arrival.key, { fromLink: true })
        : arrival.kind === 'code'
          ? exchangeCode(client, arrival.code)
          : client.session
            ? client.start()
            : Promise.resolve();
    const linkSpent = (err: unknown) => (arrival.kind === 'code' || arrival.kind === 'key') && err instanceof ApiError && err.status === 401;
    begin.then(
      () => setReady(true),
      // Offline with a session: the shell and its offline banner, not the sign-in screen.
      (err) => (client.session && isUnreachable(err) ? setOffline(true) : Promise.reject(err)),
    ).then(
      () => setReady(true),
      // A spent or expired sign-in link says so: a code used once, a link's key revoked once used (client.signIn).
      (err) => (setError(linkSpent(err) ? 'This sign-in link was already used or has expired. Sign in again.' : errorMessage(err)), setReady(true)),
    );
    const online = () => client.reconnectNow();
    const offline = () => client.dropStream();
    window.addEventListener('offline', offline);
    const visible = () => document.visibilityState === 'visible' && client.reconnectNow();
    window.addEventListener('online', online);
    document.addEventListener('visibilitychange', visible);
    return () => (window.removeEventListener('online', online), window.removeEventListener('offline', offline), document.removeEventListener('visibilitychange', visible));
  }, []);

  if (offline) return <OfflineStart onRetry={() => void client.start().then(() => setOffline(false), () => undefined)} />;
  if (!ready) return <AppSkeleton />;
  const done = () => (setPending(null), setError(null), navigate('/'));
  if (pending?.kind === 'invite') return <InviteWelcome token={pending.token} email={pending.email} onDone={done} />;
  if (pending?.kind === 'reset') return <ResetPassword code={pending.code} onDone={done} />;
  if (!client.session || !client.store.me) return <SignIn error={error ?? client.signedOutReason} onSignedIn={() => setError(null)} />;
  if (path === '/settings') return <Settings navigate={navigate} />;
  // An MCP client asking for access (level 3; ui/oauth-consent.tsx).
  const consent = consentRequestOf(path);
  if (consent) return <OAuthConsent requestId={consent} />;
  const route = conversationRoute(path);
  return <Chat conversationId={route?.conversationId ?? null} messageId={route?.messageId ?? null} navigate={navigate} />;
}

/** No answer at all (offline, server down), as opposed to an answer that says no. */
const isUnreachable = (err: unknown) => !(err instanceof ApiError) || err.code === 'network';

/** The app's shape while it loads (not a bare "Loading…"). */
function AppSkeleton() {
  return (
    <div class="chat" role="status" aria-label="Loading Axid">
      <div class="sidebar">
        {[70, 55, 80, 60, 45].map((w) => <div key={w} class={`skeleton line w${w}`} />)}
      </div>
      <div class="conversation">
        {[1, 2, 3, 4].map((n) => (
          <div key={n} class="skeleton-message">
            <div class="skeleton avatar-box" />
            <div class="skeleton line w60" />
          </div>
        ))}
      </div>
    </div>
  );
}
