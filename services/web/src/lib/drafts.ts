// Drafts belong to their conversation (and thread): kept in localStorage under
// `draft:<conversation>[:<thread>]`, so a switch or a reload never carries
// text into another conversation (docs/web.md).
import type { KeyValueStorage } from './store.js';

type Storage = KeyValueStorage & { removeItem(k: string): void };

export const draftKey = (conversationId: string, threadId: string | null) => `draft:${conversationId}${threadId ? `:${threadId}` : ''}`;

export function loadDraft(storage: Storage, key: string): string {
  const value = storage.getItem(key);
  return typeof value === 'string' ? value : '';
}

export function saveDraft(storage: Storage, key: string, text: string) {
  if (text.trim()) storage.setItem(key, text);
  else storage.removeItem(key);
}
