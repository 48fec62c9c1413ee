// Suggested prompts (level 3, docs/bots.md): an empty DM with an agent offers
// the prompts the agent set (at most 4); a click sends the prompt's message
// as the person's own first message.
import { useState } from 'preact/hooks';
import { dmAgent } from '../lib/agents.js';
import { errorMessage } from '../lib/api.js';
import { displayName, useStore } from './context.js';

export function SuggestedPrompts({ conversationId }: { conversationId: string }) {
  const client = useStore();
  const [error, setError] = useState<string | null>(null);
  const agent = client.store.features.agents ? dmAgent(client, conversationId) : null;
  const prompts = agent?.suggested_prompts ?? [];
  const timeline = client.store.timeline(conversationId);
  if (!agent || !prompts.length || !timeline.loaded || client.store.list(conversationId).length) return null;
  return (
    <section class="suggested-prompts" aria-label={`Suggested prompts for ${displayName(agent)}`}>
      <h2>Ask {displayName(agent)}</h2>
      <ul>
        {prompts.slice(0, 4).map((p) => (
          <li key={p.title}>
            <button type="button" class="prompt card" onClick={() => void client.send(conversationId, p.message).then(() => setError(null), (err) => setError(errorMessage(err)))}>
              <strong>{p.title}</strong>
              <span class="muted">{p.message}</span>
            </button>
          </li>
        ))}
      </ul>
      {error ? <p class="error" role="alert">{error}</p> : null}
    </section>
  );
}
