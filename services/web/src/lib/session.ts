// Sign-in: the pasted key (or one from a `/#key=...` link) is used once, to
// create this browser's own key (30 days); only that one is kept, in
// localStorage, so new tabs stay signed in. Sign-out revokes it.
import type { KeyValueStorage } from './store.js';

export interface SavedSession {
  key: string;
  keyId: string;
  name: string;
}

const SESSION_ITEM = 'axid.session';
export const KEY_DAYS = 30;

export function loadSession(storage: KeyValueStorage): SavedSession | null {
  try {
    const s = JSON.parse(storage.getItem(SESSION_ITEM) ?? 'null') as SavedSession | null;
    return s && typeof s.key === 'string' && typeof s.keyId === 'string' ? s : null;
  } catch {
    return null;
  }
}

export function saveSession(storage: KeyValueStorage & { removeItem(k: string): void }, s: SavedSession | null) {
  if (s) storage.setItem(SESSION_ITEM, JSON.stringify(s));
  else storage.removeItem(SESSION_ITEM);
}

export function browserName(userAgent: string) {
  if (/Edg\//.test(userAgent)) return 'Edge';
  if (/Firefox\//.test(userAgent)) return 'Firefox';
  if (/Chrom(e|ium)\//.test(userAgent)) return 'Chrome';
  if (/Safari\//.test(userAgent)) return 'Safari';
  return 'Browser';
}

/** `Web: Chrome 2026-11-23`, expiring 30 days on. */
export function browserKeyRequest(userAgent: string, now = new Date()) {
  return {
    name: `Web: ${browserName(userAgent)} ${now.toISOString().slice(0, 10)}`,
    expires_at: new Date(now.getTime() + KEY_DAYS * 86_400_000).toISOString(),
  };
}

/** A key from the URL fragment (`#key=...`), which never reaches the server. */
export function keyFromHash(hash: string): string | null {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  const key = params.get('key');
  return key && key.trim() ? key.trim() : null;
}
