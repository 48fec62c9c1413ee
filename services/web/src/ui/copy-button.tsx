// Copying to the clipboard: a button (secrets, links, a message's permalink)
// and the block that shows a secret or a one-time link once, to copy
// (API keys, invite links, sign-in links).
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { Icon, type IconName } from './icons.js';

/** Copies `text`; says "Copied" after. `glyph` makes it an icon button (the message toolbar). */
export function CopyButton({ text, label, glyph, tabIndex }: { text: string; label: string; glyph?: IconName; tabIndex?: number }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      tabIndex={tabIndex}
      class={glyph ? undefined : 'btn small'}
      aria-label={label}
      title={glyph ? (done ? 'Copied' : label) : undefined}
      onClick={() => void navigator.clipboard?.writeText(text).then(() => setDone(true), () => setDone(false))}
    >
      {glyph ? <Icon name={done ? 'check' : glyph} /> : done ? 'Copied' : 'Copy'}
    </button>
  );
}

/** A secret or a one-time link, shown once: what it is, the value, Copy and Done. */
export function ShownOnce({ value, testId, copyLabel, onDone, children }: { value: string; testId: string; copyLabel: string; onDone(): void; children?: ComponentChildren }) {
  return (
    <div class="secret" role="status">
      {children ? <p>{children}</p> : null}
      <code class="secret-value" data-testid={testId}>{value}</code>
      <CopyButton text={value} label={copyLabel} />
      <button class="btn small" onClick={onDone}>Done</button>
    </div>
  );
}
