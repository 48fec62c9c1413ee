// A new key's limits (level 3, docs/security.md "Scopes"): the scopes it may
// use and, optionally, the only conversations it reaches. Nothing chosen is
// no limit (the fields are left out of the request), as the API has it.
import type { ApiKey } from '../lib/types.js';
import { conversationTitle } from './sidebar.js';
import { useStore } from './context.js';

export type Scope = NonNullable<ApiKey['scopes']>[number];

export const SCOPES: [Scope, string][] = [
  ['read', 'Read what you can see: conversations, messages, people, files, search'],
  ['messages:write', 'Post, edit and delete messages, react, answer buttons'],
  ['channels:write', 'Make and change channels, conversations, members and incoming webhooks'],
  ['files:write', 'Upload files'],
  ['events', 'The live event stream and event subscriptions'],
  ['admin', 'The workspace, people and agents, invites, your profile, revoking keys'],
];

export interface KeyLimits {
  scopes: Scope[];
  conversationIds: string[];
}

/** The request's fields for the limits chosen (none when nothing is chosen). */
export function limitsBody(l: KeyLimits): { scopes?: Scope[]; conversation_ids?: string[] } {
  return { ...(l.scopes.length ? { scopes: l.scopes } : {}), ...(l.conversationIds.length ? { conversation_ids: l.conversationIds } : {}) };
}

const toggled = <T,>(list: T[], item: T, on: boolean) => (on ? [...list.filter((x) => x !== item), item] : list.filter((x) => x !== item));

export function KeyLimitsFields({ value, onChange }: { value: KeyLimits; onChange(v: KeyLimits): void }) {
  const client = useStore();
  const s = client.store;
  const conversations = [...[...s.channels.values()].filter((c) => s.memberOf.has(c.id)).map((c) => c.id), ...s.dms.keys()];
  return (
    <div class="key-limits">
      <fieldset>
        <legend>Scopes <span class="muted">(none chosen: everything your role allows)</span></legend>
        {SCOPES.map(([scope, what]) => (
          <label key={scope} class="check">
            <input type="checkbox" checked={value.scopes.includes(scope)} onChange={(e) => onChange({ ...value, scopes: toggled(value.scopes, scope, e.currentTarget.checked) })} />
            <code>{scope}</code> <span class="muted">{what}</span>
          </label>
        ))}
      </fieldset>
      <fieldset>
        <legend>Conversations <span class="muted">(none chosen: all of yours)</span></legend>
        <div class="key-conversations">
          {conversations.map((id) => (
            <label key={id} class="check">
              <input type="checkbox" checked={value.conversationIds.includes(id)} onChange={(e) => onChange({ ...value, conversationIds: toggled(value.conversationIds, id, e.currentTarget.checked) })} />
              {conversationTitle(client, id)}
            </label>
          ))}
        </div>
      </fieldset>
    </div>
  );
}

/** A key's limits in its row: its scopes, and the names of the conversations it reaches. */
export function KeyLimitsShown({ apiKey }: { apiKey: ApiKey }) {
  const client = useStore();
  const ids = apiKey.conversation_ids;
  return (
    <>
      {apiKey.scopes ? <span class="tag" title="Scopes">{apiKey.scopes.join(', ')}</span> : null}
      {ids ? (
        <span class="tag" title="The only conversations this key reaches">
          {ids.length > 3 ? `${ids.length} conversations` : ids.map((id) => (client.store.isConversation(id) ? conversationTitle(client, id) : 'a conversation')).join(', ')}
        </span>
      ) : null}
    </>
  );
}
