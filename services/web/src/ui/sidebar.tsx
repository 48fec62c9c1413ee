// The sidebar: channels (sub-channels under their parent; private, default
// marked), other public channels to join, DMs (agents marked as bots), unread
// counts, the connection state, and the way to settings.
import type { Channel } from '../lib/types.js';
import { displayName, useStore } from './context.js';

export function conversationTitle(client: ReturnType<typeof useStore>, id: string) {
  const c = client.store.channels.get(id);
  if (c) return `#${c.name}`;
  const dm = client.store.dms.get(id);
  if (!dm) return 'Conversation';
  const others = dm.member_ids.filter((u) => u !== client.store.me?.id);
  return others.map((u) => displayName(client.store.users.get(u))).join(', ') || 'Just you';
}

export function connectionLabel(client: ReturnType<typeof useStore>) {
  const state = client.streamState;
  if (state === 'live') return 'Live';
  if (state === 'reconnecting') return `Reconnecting${client.streamRetryInMs ? ` in ${Math.ceil(client.streamRetryInMs / 1000)} s` : '…'}`;
  return state === 'connecting' ? 'Connecting…' : 'Offline';
}

export function Sidebar({ current, onOpen, onCreate, onSwitcher, onSettings }: { current: string | null; onOpen(id: string): void; onCreate(): void; onSwitcher(): void; onSettings(): void }) {
  const client = useStore();
  const s = client.store;
  const channels = [...s.channels.values()].sort((a, b) => a.name.localeCompare(b.name));
  const mine = channels.filter((c) => s.memberOf.has(c.id));
  const tops = mine.filter((c) => !c.parent_channel_id || !s.memberOf.has(c.parent_channel_id));
  const others = channels.filter((c) => !s.memberOf.has(c.id));
  const state = client.streamState;

  const item = (c: Channel, sub = false) => {
    const unread = s.unreadCount(c.id);
    return (
      <li key={c.id}>
        <a
          href={`/c/${c.id}`}
          class={`conv${current === c.id ? ' current' : ''}${sub ? ' sub' : ''}${unread ? ' unread' : ''}`}
          aria-current={current === c.id ? 'page' : undefined}
          onClick={(e) => (e.preventDefault(), onOpen(c.id))}
        >
          <span aria-hidden="true">{c.is_private ? '🔒' : '#'}</span>
          <span class="name">{c.name}</span>
          {c.is_private ? <span class="sr-only">(private)</span> : null}
          {c.is_default ? <span class="tag" title="Default channel: new agents join it">default</span> : null}
          {unread ? <span class="count" aria-label={`${unread} unread`}>{unread}</span> : null}
        </a>
      </li>
    );
  };

  return (
    <nav class="sidebar" aria-label="Conversations">
      <div class="workspace">
        <strong>{s.workspace?.name}</strong>
        <span class={`conn conn-${state}`} role="status" aria-live="polite" data-stream-state={state}>
          {connectionLabel(client)}
        </span>
      </div>
      <button class="btn switcher-btn" onClick={onSwitcher}>
        Jump to… <kbd>Ctrl K</kbd>
      </button>
      <h2>
        Channels <button class="icon" aria-label="Create a channel" title="Create a channel" onClick={onCreate}>+</button>
      </h2>
      <ul>
        {tops.flatMap((c) => [item(c), ...mine.filter((sub) => sub.parent_channel_id === c.id).map((sub) => item(sub, true))])}
        {mine.length === 0 ? <li class="muted">You are in no channel yet.</li> : null}
      </ul>
      {others.length ? (
        <>
          <h2>More channels</h2>
          <ul>{others.map((c) => item(c, Boolean(c.parent_channel_id)))}</ul>
        </>
      ) : null}
      <h2>Direct messages</h2>
      <ul>
        {[...s.dms.values()].map((d) => {
          const unread = s.unreadCount(d.id);
          const others = d.member_ids.filter((u) => u !== s.me?.id);
          const bot = others.some((u) => s.users.get(u)?.is_agent);
          return (
            <li key={d.id}>
              <a href={`/c/${d.id}`} class={`conv${current === d.id ? ' current' : ''}${unread ? ' unread' : ''}`} aria-current={current === d.id ? 'page' : undefined} onClick={(e) => (e.preventDefault(), onOpen(d.id))}>
                <span aria-hidden="true">{d.kind === 'group_dm' ? '👥' : '●'}</span>
                <span class="name">{conversationTitle(client, d.id)}</span>
                {bot ? <span class="badge">bot</span> : null}
                {unread ? <span class="count" aria-label={`${unread} unread`}>{unread}</span> : null}
              </a>
            </li>
          );
        })}
        {s.dms.size === 0 ? <li class="muted">No direct messages.</li> : null}
      </ul>
      <div class="me">
        <span>{displayName(s.me)}</span>
        <button class="btn small" onClick={onSettings}>Settings</button>
      </div>
    </nav>
  );
}
