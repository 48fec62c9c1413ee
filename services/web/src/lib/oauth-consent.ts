// The consent screen's address and words (ui/oauth-consent.tsx; docs/mcp.md).
// An MCP client's /authorize sends the browser to `/oauth/consent/<request id>`
// (services/api/modules/oauth/oauth.http.ts).

/** The authorization request a path names, else null. */
export function consentRequestOf(path: string): string | null {
  const m = /^\/oauth\/consent\/([A-Za-z0-9-]{1,64})\/?$/.exec(path);
  return m ? m[1]! : null;
}

/** What each scope lets the client do, in the person's words (docs/security.md, "Scopes"). */
export const SCOPE_TEXT: Record<string, string> = {
  read: 'Read messages, channels, people and files you can see',
  'messages:write': 'Post, edit and react as you; invoke commands',
  'channels:write': 'Create channels and change their members',
  'files:write': 'Upload files as you',
  events: 'Receive events as they happen',
  admin: 'Manage the workspace as your role allows: people, agents, keys',
};
