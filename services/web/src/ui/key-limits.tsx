// A key's limits (level 3, docs/security.md "Scopes"): the scopes it may use
// and, optionally, the only conversations it reaches, as a new key's request
// and in the key list. The form choosing them is key-limits-form.tsx (loaded
// when opened). Nothing chosen is no limit: the fields are left out.
import type { ApiKey } from '../lib/types.js';
import { conversationTitle, useStore } from './context.js';

export type Scope = NonNullable<ApiKey['scopes']>[number];

export interface KeyLimits {
  scopes: Scope[];
  conversationIds: string[];
}

/** The request's fields for the limits chosen (none when nothing is chosen). */
export function limitsBody(l: KeyLimits): { scopes?: Scope[]; conversation_ids?: string[] } {
  return { ...(l.scopes.length ? { scopes: l.scopes } : {}), ...(l.conversationIds.length ? { conversation_ids: l.conversationIds } : {}) };
}

/** A key's limits in its row: its scopes, and how many conversations it reaches (named, up to three). */
export function KeyLimitsShown({ apiKey }: { apiKey: ApiKey }) {
  const client = useStore();
  const ids = apiKey.conversation_ids;
  return (
    <>
      {apiKey.scopes ? <span class="tag" title="Scopes">{apiKey.scopes.join(', ')}</span> : null}
      {ids ? (
        <span class="tag" title="The only conversations this key reaches">
          {ids.length === 1 ? '1 conversation' : `${ids.length} conversations`}
          {ids.length <= 3 ? `: ${ids.map((id) => (client.store.isConversation(id) ? conversationTitle(client, id) : 'one you cannot see')).join(', ')}` : null}
        </span>
      ) : null}
    </>
  );
}
