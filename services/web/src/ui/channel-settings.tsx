// A channel's name and description (members, admins and owners, as the API
// allows: services/core/channels/channels.policy.ts). The name is checked as
// the API checks it, with the reason shown while typing.
import { useState } from 'preact/hooks';
import { errorMessage } from '../lib/api.js';
import { channelNameProblem, descriptionProblem } from '../lib/rules.js';
import type { Channel } from '../lib/types.js';
import { useStore } from './context.js';
import { Dialog } from './dialog.js';

export function ChannelSettings({ channel, onClose }: { channel: Channel; onClose(): void }) {
  const client = useStore();
  const [name, setName] = useState(channel.name);
  const [description, setDescription] = useState(channel.description ?? '');
  const [error, setError] = useState<string | null>(null);
  const nameProblem = channelNameProblem(name);
  const descProblem = descriptionProblem(description);
  const save = async (e: Event) => {
    e.preventDefault();
    if (nameProblem || descProblem) return;
    try {
      await client.updateChannel(channel.id, { ...(name !== channel.name ? { name } : {}), ...(description !== (channel.description ?? '') ? { description } : {}) });
      onClose();
    } catch (err) {
      setError(errorMessage(err));
    }
  };
  return (
    <Dialog title="Channel settings" onClose={onClose}>
      <form class="form" onSubmit={save} noValidate>
        <label>
          Name
          <input data-autofocus value={name} aria-invalid={nameProblem ? 'true' : undefined} aria-describedby="channel-name-problem" onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <p id="channel-name-problem" class={nameProblem ? 'error' : 'sr-only'} aria-live="polite">{nameProblem ?? ''}</p>
        <label>
          Description
          <textarea rows={3} value={description} aria-invalid={descProblem ? 'true' : undefined} onInput={(e) => setDescription(e.currentTarget.value)} />
        </label>
        {descProblem ? <p class="error">{descProblem}</p> : null}
        {error ? <p class="error" role="alert">{error}</p> : null}
        <p class="muted">Channels cannot be archived or deleted on this server; members can leave them.</p>
        <div class="row">
          <button class="btn" type="button" onClick={onClose}>Cancel</button>
          <button class="btn btn-primary" type="submit" disabled={Boolean(nameProblem || descProblem)}>Save</button>
        </div>
      </form>
    </Dialog>
  );
}
