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
  /** GET /threads: the Threads view (threads one follows, with unread replies). */
  threads: boolean;
}

export function featuresFor(level: number): Features {
  const three = level >= 3;
  return { search: three, presence: three, readState: three, actions: three, editHistory: three, idempotentSends: three, signInLinks: three, historyAround: three, serverPrefs: three, threads: three };
}
