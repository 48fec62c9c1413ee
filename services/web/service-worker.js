// The service worker (served as /sw.js; vite.config.ts writes it at build,
// this file after two constants: VERSION, a hash of the build, and SHELL, the
// files of the first load). It serves the app shell offline: index.html for
// every page, the hashed scripts and styles it loads, the manifest and icons.
// Lazily loaded chunks (emoji data, highlighting, pdf.js) are kept the first
// time the app loads them. The API and its event stream never go through a
// cache. A new build installs at once and takes over open tabs (skipWaiting,
// clients.claim); the app then offers a reload (lib/service-worker.ts).
/* global VERSION, SHELL */
const CACHE = `axid-shell-${VERSION}`;

/** Never through the worker: the API (its JSON and the event stream) and hooks. */
const NETWORK_ONLY = /^\/(api|hooks)(\/|$)/;

self.addEventListener('install', (event) => {
  // Where the browser has static routes (Chromium), these requests skip the worker altogether: no fetch event,
  // so an API call never waits for the worker to wake (the fetch handler below leaves them alone elsewhere).
  const routes =
    'addRoutes' in event
      ? event.addRoutes(['/api/*', '/hooks/*'].map((pathname) => ({ condition: { urlPattern: { pathname } }, source: 'network' }))).catch(() => undefined)
      : null;
  event.waitUntil(
    Promise.all([
      routes,
      caches.open(CACHE).then((cache) => cache.addAll(SHELL.map((url) => new Request(url, { cache: 'reload' })))),
    ]).then(() => self.skipWaiting()),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys()) if (name.startsWith('axid-shell-') && name !== CACHE) await caches.delete(name);
      // The page's request goes out while the worker starts, so a page load waits for no worker.
      await self.registration.navigationPreload?.enable();
      await self.clients.claim();
    })(),
  );
});

self.addEventListener('fetch', (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== 'GET' || url.origin !== location.origin) return;
  if (NETWORK_ONLY.test(url.pathname)) return;
  if (request.mode === 'navigate') {
    // The network's index.html when there is one (it may be a newer build); the cached shell when not.
    event.respondWith(
      (async () => {
        try {
          return (await event.preloadResponse) ?? (await fetch(request));
        } catch {
          return (await caches.match('/', { cacheName: CACHE })) ?? Response.error();
        }
      })(),
    );
    return;
  }
  if (url.pathname.startsWith('/assets/') || SHELL.includes(url.pathname)) {
    // Hashed files never change: the cache first, else the network, kept for next time.
    event.respondWith(
      (async () => {
        const cached = await caches.match(request, { cacheName: CACHE });
        if (cached) return cached;
        const response = await fetch(request);
        if (response.ok && url.pathname.startsWith('/assets/')) {
          const copy = response.clone();
          event.waitUntil(caches.open(CACHE).then((cache) => cache.put(request, copy)));
        }
        return response;
      })(),
    );
  }
});
