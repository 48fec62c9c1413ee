// Keyboard habits from Slack: Alt+↑/↓ moves to the conversation above or
// below in the sidebar (Alt+Shift+↑/↓ to the unread ones), `?` outside a text
// field or Ctrl+/ shows every shortcut. (Up in an empty composer edits one's
// last message: ui/composer.tsx.)
import { useEffect } from 'preact/hooks';
import { conversationRoute } from '../lib/routes.js';
import { Dialog } from './dialog.js';

/** Whether a key goes to something one types in (then `?` is a character, not the help). */
function typingInto(target: EventTarget | null) {
  const el = target as HTMLElement | null;
  return Boolean(el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName)));
}

/**
 * The conversation `step` places away from `current` in the sidebar's order
 * (as drawn), among the unread ones when `unreadOnly`; wraps around. Read from
 * the sidebar itself, so the order is always the one the person sees.
 */
export function neighbourConversation(current: string | null, step: 1 | -1, unreadOnly: boolean): string | null {
  const links = [...document.querySelectorAll<HTMLAnchorElement>('nav.sidebar a.conv')];
  const ids = links.map((a) => ({ id: conversationRoute(a.pathname)?.conversationId ?? null, unread: a.classList.contains('unread') }));
  const at = ids.findIndex((i) => i.id === current);
  for (let n = 1; n <= ids.length; n += 1) {
    const next = ids[(((at < 0 ? (step > 0 ? -1 : 0) : at) + step * n) % ids.length + ids.length) % ids.length];
    if (next?.id && next.id !== current && (!unreadOnly || next.unread)) return next.id;
  }
  return null;
}

export function useShortcuts(o: { current: string | null; onOpen(id: string): void; onHelp(): void }) {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.altKey && !e.ctrlKey && !e.metaKey && (e.key === 'ArrowUp' || e.key === 'ArrowDown')) {
        const id = neighbourConversation(o.current, e.key === 'ArrowUp' ? -1 : 1, e.shiftKey);
        e.preventDefault();
        if (id) o.onOpen(id);
      } else if (((e.ctrlKey || e.metaKey) && e.key === '/') || (e.key === '?' && !e.ctrlKey && !e.metaKey && !e.altKey && !typingInto(e.target))) {
        e.preventDefault();
        o.onHelp();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [o.current]);
}

const SHORTCUTS: [keys: string[][], what: string][] = [
  [[['Ctrl', 'K']], 'Jump to a conversation or person'],
  [[['Alt', '↑'], ['Alt', '↓']], 'Previous or next conversation in the sidebar'],
  [[['Alt', 'Shift', '↑'], ['Alt', 'Shift', '↓']], 'Previous or next unread conversation'],
  [[['↑']], 'In an empty message box: edit your last message'],
  [[['Enter']], 'Send (in the edit box: save)'],
  [[['Shift', 'Enter']], 'New line'],
  [[['Esc']], 'Close a dialog, the thread or a panel; cancel an edit'],
  [[['?'], ['Ctrl', '/']], 'Show these shortcuts'],
];

export function ShortcutHelp({ onClose }: { onClose(): void }) {
  return (
    <Dialog title="Keyboard shortcuts" onClose={onClose}>
      <table class="shortcuts">
        <thead>
          <tr>
            <th scope="col">Keys</th>
            <th scope="col">What they do</th>
          </tr>
        </thead>
        <tbody>
          {SHORTCUTS.map(([combos, what]) => (
            <tr key={what}>
              <td>
                {combos.map((keys, i) => (
                  <span key={keys.join('+')}>
                    {i ? ' or ' : ''}
                    {keys.map((k, j) => (
                      <span key={k}>{j ? '+' : ''}<kbd>{k}</kbd></span>
                    ))}
                  </span>
                ))}
              </td>
              <td>{what}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="row">
        <button class="btn" data-autofocus onClick={onClose}>Close</button>
      </p>
    </Dialog>
  );
}
