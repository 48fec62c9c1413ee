// The flat row list the virtual list renders: day separators between days,
// and messages flagged `grouped` when they continue the previous sender's run
// (same sender, same day, under 5 minutes apart). The sender is the author as
// shown: a hook post's `username`/icon override is a sender of its own, so it
// never hides under a person's message.
import type { ShownMessage } from './store.js';

export type Row =
  | { kind: 'day'; key: string; label: string }
  | { kind: 'unread'; key: string }
  | { kind: 'message'; key: string; message: ShownMessage; grouped: boolean };

const GROUP_MS = 5 * 60_000;

export const dayOf = (iso: string) => {
  const d = new Date(iso);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
};

/** Who a message is shown as coming from: author, hook, and display override. */
export const senderOf = (m: Pick<ShownMessage, 'author_id' | 'webhook_id' | 'display'>) =>
  JSON.stringify([m.author_id, m.webhook_id, m.display?.username ?? null, m.display?.icon_url ?? null, m.display?.icon_emoji ?? null]);

/**
 * `unread`, when given, says where the person stopped reading: the "new
 * messages" line goes before the first later message from someone else
 * (`afterId` at feature level 3, else `afterTime`, this browser's own record).
 */
export function buildRows(
  messages: ShownMessage[],
  dayLabel: (iso: string) => string = dayOf,
  unread?: { afterId?: string | null; afterTime?: string | null; me: string | null },
): Row[] {
  const rows: Row[] = [];
  let prev: ShownMessage | null = null;
  let lineDrawn = !unread || (!unread.afterId && !unread.afterTime);
  let passedRead = !unread?.afterId;
  let afterLine = false;
  for (const m of messages) {
    if (!lineDrawn && m.state === 'sent' && m.author_id !== unread!.me && (unread!.afterId ? passedRead : m.created_at > unread!.afterTime!)) {
      rows.push({ kind: 'unread', key: 'unread-line' });
      lineDrawn = true;
      afterLine = true; // the first unread message shows its author again
    }
    if (unread?.afterId && m.id === unread.afterId) passedRead = true;
    const day = dayOf(m.created_at);
    const newDay = !prev || dayOf(prev.created_at) !== day;
    if (newDay) rows.push({ kind: 'day', key: `day:${day}`, label: dayLabel(m.created_at) });
    const grouped =
      !newDay && !afterLine && prev !== null && senderOf(prev) === senderOf(m) && !m.metadata && Date.parse(m.created_at) - Date.parse(prev.created_at) < GROUP_MS;
    rows.push({ kind: 'message', key: m.key, message: m, grouped });
    afterLine = false;
    prev = m;
  }
  return rows;
}

/** "just now", "5 min ago", "3 h ago", else the date. */
export function relativeTime(iso: string, now = Date.now()) {
  const s = Math.round((now - Date.parse(iso)) / 1000);
  if (s < 45) return 'just now';
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86_400) return `${Math.round(s / 3600)} h ago`;
  return new Date(iso).toLocaleDateString();
}
