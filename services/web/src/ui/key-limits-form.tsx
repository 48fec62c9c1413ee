// The form choosing a new key's limits (level 3, docs/security.md "Scopes"):
// a checkbox per scope, and per conversation the person is in. Loaded when
// the person opens "Limit what the key can do" (settings.tsx).
import { conversationTitle, useStore } from './context.js';
import type { KeyLimits, Scope } from './key-limits.js';

export const SCOPES: [Scope, string][] = [
  ['read', 'Read what you can see: conversations, messages, people, files, search'],
  ['messages:write', 'Post, edit and delete messages, react, answer buttons'],
  ['channels:write', 'Make and change channels, conversations, members and incoming webhooks'],
  ['files:write', 'Upload files'],
  ['events', 'The live event stream and event subscriptions'],
  ['admin', 'The workspace, people and agents, invites, your profile, revoking keys'],
];

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

