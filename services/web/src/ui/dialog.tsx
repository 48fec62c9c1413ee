// The one modal dialog of the app (create channel, switcher, emoji, profile,
// new message, channel settings, lightbox, edit history). Drawn at the
// document's root through a portal: one opened from a message would otherwise
// sit inside the virtual list's row (`contain: layout`) within `.timeline`
// (`contain: strict`), where `position: fixed` is relative to the row, so it
// was clipped and the next rows were drawn over it.
import type { ComponentChildren } from 'preact';
import { createPortal } from 'preact/compat';
import { useLayoutEffect, useRef } from 'preact/hooks';

const FOCUSABLE = 'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

/**
 * A modal dialog: takes focus (its `data-autofocus` element, else the first
 * focusable one) as soon as it is drawn, keeps Tab and Shift+Tab inside, and
 * gives focus back to whatever had it when it closes (Escape closes it). The focus moves in a
 * layout effect, which runs before the next key event is handled, so keys
 * typed right after Ctrl+K never reach the composer behind.
 */
export function Dialog({ title, onClose, children, wide, class: extra }: { title: string; onClose(): void; children: ComponentChildren; wide?: boolean; class?: string }) {
  const returnTo = useRef<Element | null>(document.activeElement);
  const box = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    const el = box.current!;
    (el.querySelector<HTMLElement>('[data-autofocus]') ?? el.querySelector<HTMLElement>(FOCUSABLE) ?? el).focus();
    return () => (returnTo.current as HTMLElement | null)?.focus?.();
  }, []);
  const trap = (e: KeyboardEvent) => {
    if (e.key === 'Escape') return (e.stopPropagation(), e.preventDefault(), onClose());
    if (e.key !== 'Tab') return;
    const items = [...box.current!.querySelectorAll<HTMLElement>(FOCUSABLE)].filter((x) => x.offsetParent !== null);
    if (!items.length) return e.preventDefault();
    const first = items[0]!;
    const last = items.at(-1)!;
    const inside = box.current!.contains(document.activeElement);
    if (e.shiftKey && (document.activeElement === first || !inside)) (e.preventDefault(), last.focus());
    else if (!e.shiftKey && (document.activeElement === last || !inside)) (e.preventDefault(), first.focus());
  };
  return createPortal(
    <div class="overlay" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div ref={box} class={`dialog${wide ? ' wide' : ''}${extra ? ` ${extra}` : ''}`} role="dialog" aria-modal="true" aria-label={title} tabIndex={-1} onKeyDown={trap}>
        <h2>{title}</h2>
        {children}
      </div>
    </div>,
    document.body,
  );
}
