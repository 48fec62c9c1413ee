// What the server offers, named: derived once from its X-Service-Feature-Level
// header (contract §9, §12) so that views ask for a feature ("search") rather
// than compare level numbers. Level 2 (the default) offers none of these.

export interface Features {
  /** GET /search/messages: the search box and its results. */
  search: boolean;
  /** init.presence and presence.updated: the online dots. */
  presence: boolean;
  /** Read state on the server: counts in the lists, POST .../read, channel.read. */
  readState: boolean;
  /** POST /interactions/actions: `actionId` buttons are enabled. */
  actions: boolean;
  /** GET .../messages/{id}/edits: "(edited)" opens the earlier versions. */
  editHistory: boolean;
  /** Idempotency-Key on a send, so a retried POST cannot post twice. */
  idempotentSends: boolean;
  /** Passwords and links (invite, password reset, sign-in on another device). */
  signInLinks: boolean;
  /** GET/PATCH /users/me/preferences: muted conversations and the theme follow the person across devices. */
  serverPrefs: boolean;
  /** `around`, `after` and prev_cursor on history lists: a permalink opens a page around its message, however far back. */
  historyAround: boolean;
  /** Scheduled messages (send_at) and reminders (docs/team-chat.md): "Schedule for later", "Remind me", their lists. */
  later: boolean;
  /** `email_notifications` on PATCH /users/me (docs/email.md): the email setting in Preferences. */
  emailNotifications: boolean;
  /** POST /imports/slack (owners): Settings → Import from Slack. */
  imports: boolean;
  /** docs/team-chat.md: user groups and `@here`/`@channel`, pins, browsing and archiving channels, custom emoji. */
  teamChat: boolean;
  /** Agents at home (docs/bots.md): suggested prompts, slash commands, ephemeral replies, feedback and approvals, scoped keys. */
  agents: boolean;
  /** GET /threads: the Threads view (threads one follows, with unread replies). */
  threads: boolean;
}

export function featuresFor(level: number): Features {
  const three = level >= 3;
  return { search: three, presence: three, readState: three, actions: three, editHistory: three, idempotentSends: three, signInLinks: three, historyAround: three, serverPrefs: three, later: three, emailNotifications: three, imports: three, teamChat: three, agents: three, threads: three };
}
