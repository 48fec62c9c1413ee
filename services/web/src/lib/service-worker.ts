// The installable app's service worker (/sw.js, written at build from
// services/web/service-worker.js): registered once the page has loaded, so it
// never competes with the first paint. A new build's worker takes over open
// tabs at once; the tab then offers a reload (ui/app-update.tsx), since the
// code it runs is the old build's.
let updateReady = false;
const listeners = new Set<() => void>();

export function registerServiceWorker() {
  if (!('serviceWorker' in navigator) || !import.meta.env.PROD) return;
  // The first worker to control the tab came with this very build (first install): nothing to reload.
  let controlled = !!navigator.serviceWorker.controller;
  navigator.serviceWorker.addEventListener('controllerchange', () => {
    if (!controlled) return void (controlled = true);
    if (updateReady) return;
    updateReady = true;
    for (const l of listeners) l();
  });
  const register = () => void navigator.serviceWorker.register('/sw.js').catch(() => undefined);
  if (document.readyState === 'complete') register();
  else window.addEventListener('load', register, { once: true });
}

/** Whether a newer build has taken over this tab (and the listener, called when it does). */
export function onUpdateReady(listener: () => void): () => void {
  listeners.add(listener);
  return () => void listeners.delete(listener);
}
export const isUpdateReady = () => updateReady;
