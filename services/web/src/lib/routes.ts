// The app's addresses. Routes are paths (the API role answers every non-API
// path with index.html; the fragment is kept for secrets, lib/sign-in.ts):
// `/c/<conversation>` opens a conversation, `/c/<conversation>/m/<message>` is
// a message's permalink (the message's thread, for a reply, is found from the
// message itself, so one shape serves both), `/settings` the settings.

export const conversationPath = (conversationId: string) => `/c/${encodeURIComponent(conversationId)}`;

export const messagePath = (conversationId: string, messageId: string) => `${conversationPath(conversationId)}/m/${encodeURIComponent(messageId)}`;

/** A message's permalink: the full address to copy and paste into another tab. */
export const permalink = (origin: string, m: { channel_id: string; id: string }) => `${origin}${messagePath(m.channel_id, m.id)}`;

/** The conversation (and message) a path names, else null. */
export function conversationRoute(path: string): { conversationId: string; messageId: string | null } | null {
  const m = /^\/c\/([^/]+)(?:\/m\/([^/]+))?\/?$/.exec(path);
  if (!m) return null;
  try {
    return { conversationId: decodeURIComponent(m[1]!), messageId: m[2] ? decodeURIComponent(m[2]) : null };
  } catch {
    return null;
  }
}

/** Goes to an address of the app without loading the page again (the app routes on popstate, ui/app.tsx). */
export function openPath(path: string) {
  history.pushState(null, '', path);
  window.dispatchEvent(new PopStateEvent('popstate'));
}
