// Choosing when: a few presets (one click) and a custom date and time in the
// person's own time zone, as Slack offers for "Schedule message" and "Remind
// me". Used inside a dialog (ui/schedule-send.tsx, ui/remind-me.tsx).
import { useState } from 'preact/hooks';
import { errorMessage } from '../lib/api.js';
import { fromLocalInput, localInputValue, timeProblem, type Preset } from '../lib/later.js';

const zone = () => Intl.DateTimeFormat().resolvedOptions().timeZone;

export function WhenPicker({ presets, onPick, customLabel }: { presets: Preset[]; onPick(at: Date): Promise<void>; customLabel: string }) {
  const [custom, setCustom] = useState(() => localInputValue(presets[0]?.at ?? new Date(Date.now() + 3_600_000)));
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const pick = async (at: Date | null) => {
    const problem = timeProblem(at);
    if (problem) return setError(problem);
    setBusy(true);
    try {
      await onPick(at!);
    } catch (err) {
      setError(errorMessage(err));
      setBusy(false);
    }
  };
  return (
    <div class="when-picker">
      <ul class="when-presets" aria-label="Quick choices">
        {presets.map((p) => (
          <li key={p.label}>
            <button type="button" class="btn" disabled={busy} data-autofocus={p === presets[0] ? true : undefined} onClick={() => void pick(p.at)}>
              {p.label}
            </button>
          </li>
        ))}
      </ul>
      <form class="form when-custom" onSubmit={(e) => (e.preventDefault(), void pick(fromLocalInput(custom)))}>
        <label>
          Custom date and time
          <input type="datetime-local" required value={custom} aria-describedby="when-zone" onInput={(e) => (setCustom(e.currentTarget.value), setError(null))} />
        </label>
        <p id="when-zone" class="muted small-print">In your time zone ({zone()}).</p>
        {error ? <p class="error" role="alert">{error}</p> : null}
        <button class="btn btn-primary" type="submit" disabled={busy}>{customLabel}</button>
      </form>
    </div>
  );
}
