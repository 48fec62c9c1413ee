// Settings → Preferences → Email (level 3, docs/email.md): whether mentions
// and direct messages one missed while away are emailed. The setting is the
// person's own `email_notifications` (PATCH /users/me), so it holds on every
// device; mail apps' Unsubscribe button sets it to "never" too.
import { useState } from 'preact/hooks';
import { errorMessage } from '../lib/api.js';
import { useStore } from './context.js';

type Choice = 'mentions' | 'never';

export function EmailNotifications() {
  const client = useStore();
  const me = client.store.me!;
  // The choice being saved shows at once: the radios are controlled, so any
  // render before the PATCH answered would otherwise put the old one back.
  const [saving, setSaving] = useState<Choice | null>(null);
  const current: Choice = saving ?? me.email_notifications ?? 'mentions';
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const choose = (value: Choice) => {
    setSaving(value);
    void client.updateProfile({ email_notifications: value }).then(
      () => (setSaving(null), setSaved(true), setError(null)),
      (err) => (setSaving(null), setSaved(false), setError(errorMessage(err))),
    );
  };
  return (
    <>
      <h2>Email notifications</h2>
      <p class="muted">
        When you have no Axid open, mentions of you and direct messages you have not read are emailed after a few minutes, at most one email every 15 minutes.{' '}
        {me.email ? <>They go to {me.email}.</> : <>Your account has no email address, so none is sent.</>}
      </p>
      <fieldset class="choices stacked">
        <legend>Email me</legend>
        <label class="check">
          <input type="radio" name="email-notifications" checked={current === 'mentions'} onChange={() => choose('mentions')} /> About mentions and direct messages I missed
        </label>
        <label class="check">
          <input type="radio" name="email-notifications" checked={current === 'never'} onChange={() => choose('never')} /> Never
        </label>
      </fieldset>
      {error ? <p class="error" role="alert">{error}</p> : null}
      <p class="muted" role="status">{saved ? 'Saved.' : ''}</p>
    </>
  );
}
