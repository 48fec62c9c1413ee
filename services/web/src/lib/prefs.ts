// This browser's preferences, in localStorage: theme, the developer view of
// message metadata, desktop notifications, muted conversations.
import type { KeyValueStorage } from './store.js';

export type Theme = 'system' | 'light' | 'dark';

const THEME = 'axid.theme';
const DEV_METADATA = 'axid.devMetadata';
const NOTIFY = 'axid.notifications';
const MUTED = 'axid.muted';

export class Prefs {
  constructor(private readonly storage: KeyValueStorage) {}

  get theme(): Theme {
    const t = this.storage.getItem(THEME);
    return t === 'light' || t === 'dark' ? t : 'system';
  }

  set theme(t: Theme) {
    this.storage.setItem(THEME, t);
  }

  /** Message metadata shown under each message (for people building bots). */
  get devMetadata() {
    return this.storage.getItem(DEV_METADATA) === 'on';
  }

  set devMetadata(on: boolean) {
    this.storage.setItem(DEV_METADATA, on ? 'on' : 'off');
  }

  /** Desktop notifications wanted (the browser's permission is asked separately, on a click). */
  get notifications() {
    return this.storage.getItem(NOTIFY) === 'on';
  }

  set notifications(on: boolean) {
    this.storage.setItem(NOTIFY, on ? 'on' : 'off');
  }

  /** Whether the person has answered about notifications here (turned them on or off, or said "not now"). */
  get notificationsDecided() {
    return this.storage.getItem(NOTIFY) !== null;
  }

  muted(): Set<string> {
    try {
      const v = JSON.parse(this.storage.getItem(MUTED) ?? '[]') as unknown;
      return new Set(Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
    } catch {
      return new Set();
    }
  }

  isMuted(conversationId: string) {
    return this.muted().has(conversationId);
  }

  /** All at once, as the server keeps them (lib/client.ts loadPrefs). */
  setAllMuted(ids: string[]) {
    this.storage.setItem(MUTED, JSON.stringify(ids));
  }

  setMuted(conversationId: string, on: boolean) {
    const set = this.muted();
    if (on) set.add(conversationId);
    else set.delete(conversationId);
    this.storage.setItem(MUTED, JSON.stringify([...set]));
  }
}

/**
 * Whether a new message deserves a desktop notification: a mention of me or a
 * DM, not mine, and not in the conversation I am looking at in a focused tab.
 * A muted conversation stays quiet, except that a mention of me in it still
 * notifies (as in Slack: muting silences the conversation, not people calling me).
 */
export function shouldNotify(o: {
  authorId: string | null;
  me: string;
  mentioned: boolean;
  isDm: boolean;
  muted: boolean;
  openHere: boolean;
  focused: boolean;
  enabled: boolean;
  inThread?: boolean;
}): boolean {
  if (!o.enabled || o.authorId === o.me || (o.muted && !o.mentioned)) return false;
  if (!o.mentioned && !o.isDm) return false;
  return !(o.openHere && o.focused);
}

/** Applies the theme: `data-theme` on <html> overrides the system's choice (styles.css). */
export function applyTheme(t: Theme) {
  if (t === 'system') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = t;
}
