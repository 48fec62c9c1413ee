// The sidebar: channels (sub-channels under their parent; private, default
// marked), other public channels to join, DMs (agents marked as bots), unread
// counts, the connection state, and the way to settings.
import { conversationPath } from '../lib/routes.js';
import type { Channel } from '../lib/types.js';
import { conversationTitle, displayName, useStore } from './context.js';
import { Avatar } from './message.js';
import { LaterButton } from './schedule-send.js';

export function connectionLabel(client: ReturnType<typeof useStore>) {
  const state = client.streamState;
  if (state === 'live') return 'Live';
  if (state === 'reconnecting') return `Reconnecting${client.streamRetryInMs ? ` in ${Math.ceil(client.streamRetryInMs / 1000)} s` : '…'}`;
  return state === 'connecting' ? 'Connecting…' : 'Offline';
}

/** What a sidebar item's badge says, for the ear too: "3 unread, 1 mention". */
export function unreadLabel(unread: number, mentions: number) {
  const parts = [unread ? `${unread} unread` : '', mentions ? `${mentions} ${mentions === 1 ? 'mention' : 'mentions'}` : ''].filter(Boolean);
  return parts.join(', ');
}

/** The online dot (feature level 3 only: below it the server says nothing about presence). */
export function PresenceDot({ userId }: { userId: string }) {
  const client = useStore();
  if (!client.store.features.presence) return null;
  const online = client.store.presence.get(userId) === 'online';
  return <span class={`presence ${online ? 'online' : 'offline'}`} role="img" aria-label={online ? 'online' : 'offline'} title={online ? 'online' : 'offline'} />;
}

function Badge({ id }: { id: string }) {
  const client = useStore();
  const unread = client.store.unreadCount(id);
  const mentions = client.store.mentionCount(id);
  if (!unread && !mentions) return null;
  return (
    <span class={`count${mentions ? ' mentions' : ''}`} aria-hidden="true">
      {mentions ? `@${mentions}` : unread}
    </span>
  );
}

export function Sidebar({ current, onOpen, onCreate, onSwitcher, onSettings, onNewMessage, onPeople, onProfile, onThreads, onUnreads, onShortcuts, view, onBrowse }: { current: string | null; onOpen(id: string): void; onCreate(): void; onSwitcher(): void; onSettings(): void; onNewMessage(): void; onPeople(): void; onProfile(): void; onThreads(): void; onUnreads(): void; onShortcuts(): void; view: 'threads' | 'unreads' | null; onBrowse?: () => void }) {
  const client = useStore();
  const s = client.store;
  // An archived channel (level 3) is listed only while it is open, as Slack does: Browse channels finds it.
  const channels = [...s.channels.values()].filter((c) => !c.archived_at || c.id === current).sort((a, b) => a.name.localeCompare(b.name));
  const mine = channels.filter((c) => s.memberOf.has(c.id));
  const tops = mine.filter((c) => !c.parent_channel_id || !s.memberOf.has(c.parent_channel_id));
  const others = channels.filter((c) => !s.memberOf.has(c.id));
  const state = client.streamState;

  // The link's accessible name carries what the eye reads from its badges. It must contain the text
  // seen (axe label-content-name-mismatch): a space between the name and a tag, so "general default"
  // is read, not "generaldefault"; avatars draw their initials with CSS (message.tsx).
  const accessibleName = (id: string, title: string, extra: string[] = []) =>
    [title, ...extra, unreadLabel(s.unreadCount(id), s.mentionCount(id)), client.prefs.isMuted(id) ? 'muted' : ''].filter(Boolean).join(', ');
  const item = (c: Channel, sub = false) => {
    const unread = s.unreadCount(c.id);
    return (
      <li key={c.id}>
        <a
          href={conversationPath(c.id)}
          class={`conv${current === c.id ? ' current' : ''}${sub ? ' sub' : ''}${unread ? ' unread' : ''}${client.prefs.isMuted(c.id) ? ' muted-conv' : ''}`}
          aria-current={current === c.id ? 'page' : undefined}
          aria-label={accessibleName(c.id, c.name, [c.is_private ? 'private' : '', c.is_default ? 'default' : ''].filter(Boolean))}
          onClick={(e) => (e.preventDefault(), onOpen(c.id))}
        >
          <span aria-hidden="true">{c.is_private ? '🔒' : '#'}</span>
          <span class="name">{c.name}</span>{' '}
          {c.is_default ? <span class="tag" title="Default channel: new agents join it">default</span> : null}
          <Badge id={c.id} />
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
      <button class="btn switcher-btn" onClick={onSwitcher} aria-keyshortcuts="Control+K">
        Jump to… <kbd aria-hidden="true">Ctrl K</kbd>
      </button>
      <button class="btn small people-btn" onClick={onPeople}>People</button>
      {s.features.later ? <LaterButton /> : null}
      {/* Level 3: every channel, archived ones too (ui/browse-channels.tsx). */}
      {onBrowse ? <button class="btn small people-btn" onClick={onBrowse}>Browse channels</button> : null}
      {/* Habits (issue 34): the Threads and All unreads views (ui/threads.tsx, ui/unreads.tsx). */}
      <div class="views">
        {s.features.threads ? <button class="btn small" aria-pressed={view === 'threads'} onClick={onThreads}>Threads</button> : null}
        <button class="btn small" aria-pressed={view === 'unreads'} onClick={onUnreads}>
          All unreads{s.totalUnread() ? <span class="count" aria-hidden="true">{s.totalUnread()}</span> : null}
          {s.totalUnread() ? <span class="sr-only">, {s.totalUnread()}</span> : null}
        </button>
      </div>
      <h2>
        Channels <button class="icon" aria-label="Create a channel" title="Create a channel" onClick={onCreate}>+</button>
      </h2>
      <ul>
        {tops.flatMap((c) => [item(c), ...mine.filter((sub) => sub.parent_channel_id === c.id).map((sub) => item(sub, true))])}
        {mine.length === 0 ? <li class="muted">You are in no channel yet: create one with “+” or join one below.</li> : null}
      </ul>
      {others.length ? (
        <>
          <h2>More channels</h2>
          <ul>{others.map((c) => item(c, Boolean(c.parent_channel_id)))}</ul>
        </>
      ) : null}
      <h2>
        Direct messages <button class="icon" aria-label="New message" title="New message (one person or several)" onClick={onNewMessage}>+</button>
      </h2>
      <ul>
        {[...s.dms.values()].map((d) => {
          const unread = s.unreadCount(d.id);
          const others = d.member_ids.filter((u) => u !== s.me?.id);
          const bot = others.some((u) => s.users.get(u)?.is_agent);
          const title = conversationTitle(client, d.id);
          const presence = s.features.presence && d.kind !== 'group_dm' && others[0] ? (s.presence.get(others[0]) === 'online' ? 'online' : 'offline') : '';
          return (
            <li key={d.id}>
              <a
                href={conversationPath(d.id)}
                class={`conv${current === d.id ? ' current' : ''}${unread ? ' unread' : ''}${client.prefs.isMuted(d.id) ? ' muted-conv' : ''}`}
                aria-current={current === d.id ? 'page' : undefined}
                aria-label={accessibleName(d.id, title, [bot ? 'bot' : '', presence].filter(Boolean))}
                onClick={(e) => (e.preventDefault(), onOpen(d.id))}
              >
                {d.kind === 'group_dm' || !others[0] ? <span aria-hidden="true">👥</span> : <Avatar userId={others[0]} size={24} />}
                <span class="name">{title}</span>{' '}
                {bot ? <span class="badge">bot</span> : null}
                {others[0] && d.kind !== 'group_dm' ? <PresenceDot userId={others[0]} /> : null}
                <Badge id={d.id} />
              </a>
            </li>
          );
        })}
        {s.dms.size === 0 ? <li class="muted">No direct messages yet. Start one with “+”.</li> : null}
      </ul>
      <div class="me">
        <button class="btn me-btn" onClick={onProfile}>
          <Avatar userId={s.me?.id ?? null} size={24} />
          <span>
            <span class="sr-only">Your profile: </span>
            {displayName(s.me)}
          </span>
        </button>
        <button class="btn small" onClick={onSettings}>Settings</button>
        <button class="icon" aria-label="Keyboard shortcuts" title="Keyboard shortcuts (?)" aria-keyshortcuts="Shift+? Control+/" onClick={onShortcuts}>?</button>
      </div>
    </nav>
  );
}
