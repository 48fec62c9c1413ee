import { render } from 'preact';
import { AxidClient } from './lib/client.js';
import { onEmojiLoaded } from './lib/emoji.js';
import { applyTheme } from './lib/prefs.js';
import { conversationRoute } from './lib/routes.js';
import { registerServiceWorker } from './lib/service-worker.js';
import { App } from './ui/app.js';
import { UpdateReady } from './ui/app-update.js';
import { ClientContext } from './ui/context.js';
import './styles.css';

// One client (and so one stream) per tab.
const client = new AxidClient({
  origin: location.origin,
  storage: localStorage,
  userAgent: navigator.userAgent,
  openFirst: () => conversationRoute(location.pathname)?.conversationId ?? null,
});

applyTheme(client.prefs.theme);

// Shortcodes written before the emoji data arrived are drawn again once it has.
onEmojiLoaded(() => client.store.changed());

render(
  <ClientContext.Provider value={client}>
    <App />
    <UpdateReady />
  </ClientContext.Provider>,
  document.getElementById('app')!,
);

// Installable and usable offline (the shell): lib/service-worker.ts.
registerServiceWorker();
