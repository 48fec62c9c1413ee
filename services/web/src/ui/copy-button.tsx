// A button that copies a secret or a link to the clipboard (settings, invites, sign-in links).
import { useState } from 'preact/hooks';

export function CopyButton({ text, label }: { text: string; label: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      class="btn small"
      aria-label={label}
      onClick={() => void navigator.clipboard?.writeText(text).then(() => setDone(true), () => setDone(false))}
    >
      {done ? 'Copied' : 'Copy'}
    </button>
  );
}
