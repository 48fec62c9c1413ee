// The installable app's two notices: a newer build has taken over this tab
// (lib/service-worker.ts), so a reload runs it; and a start with no
// connection, where the service worker served the app's shell and there is
// nothing to show until Axid answers again.
import { useEffect, useState } from 'preact/hooks';
import { isUpdateReady, onUpdateReady } from '../lib/service-worker.js';

export function UpdateReady() {
  const [ready, setReady] = useState(isUpdateReady);
  useEffect(() => onUpdateReady(() => setReady(true)), []);
  if (!ready) return null;
  return (
    <p class="banner update-ready" role="status">
      A new version of Axid is ready.{' '}
      <button class="btn btn-primary small" onClick={() => location.reload()}>Reload</button>
    </p>
  );
}

/** The shell while offline at start: the app's shape, and the offline banner; it starts again when the connection is back. */
export function OfflineStart({ onRetry }: { onRetry(): void }) {
  useEffect(() => {
    window.addEventListener('online', onRetry);
    return () => window.removeEventListener('online', onRetry);
  }, [onRetry]);
  return (
    <div class="chat offline-start">
      <main class="conversation" aria-label="Axid">
        <header>
          <h1>Axid</h1>
        </header>
        <p class="banner reconnect" role="status">
          You are offline. Your conversations load when the connection is back.{' '}
          <button class="link" onClick={onRetry}>Try now</button>
        </p>
        {[1, 2, 3].map((n) => (
          <div key={n} class="skeleton-message" aria-hidden="true">
            <div class="skeleton avatar-box" />
            <div class="skeleton line w60" />
          </div>
        ))}
      </main>
    </div>
  );
}
