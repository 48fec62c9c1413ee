// The chat screen: sidebar, the open conversation, and its side panels
// (thread, members), plus the create-channel dialog and the Ctrl/Cmd+K switcher.
import { useEffect, useRef, useState } from 'preact/hooks';
import { lazy, Suspense } from 'preact/compat';
import { errorMessage } from '../lib/api.js';
import { channelNameProblem } from '../lib/rules.js';
import { conversationPath, messagePath } from '../lib/routes.js';
import { threadKey } from '../lib/store.js';
import type { ChannelMember } from '../lib/types.js';
import { Composer } from './composer.js';
import { ChannelSettings } from './channel-settings.js';
import { Dialog } from './dialog.js';
import { NewMessage, PeopleDirectory, Profile } from './people.js';
import { SearchBox, SearchResults } from './search.js';
import { conversationTitle, displayName, useStore } from './context.js';
import { MessageItem } from './message.js';
import { connectionLabel, Sidebar } from './sidebar.js';
import { Timeline } from './timeline.js';
import { Icon } from './icons.js';
import { isArchived } from '../lib/team-chat.js';
import type { Message } from '../lib/types.js';

// Level 3's team chat (docs/team-chat.md): loaded when first opened, so the first load does not carry them.
const BrowseChannels = lazy(() => import('./browse-channels.js'));
const PinsPanel = lazy(() => import('./pins-panel.js'));
import { SuggestedPrompts } from './agent-prompts.js';
import { EphemeralMessages } from './ephemeral.js';
import { ShortcutHelp, useShortcuts } from './shortcuts.js';
import { ThreadsPanel } from './threads.js';
import { UnreadsPanel } from './unreads.js';

export function Chat({ conversationId, messageId, navigate }: { conversationId: string | null; messageId: string | null; navigate(path: string): void }) {
  const client = useStore();
  const [panel, setPanel] = useState<'members' | 'pins' | 'threads' | 'unreads' | null>(null);
  const [search, setSearch] = useState<string | null>(null);
  const [dialog, setDialog] = useState<'create' | 'switcher' | 'newMessage' | 'people' | 'profile' | 'channelSettings' | 'browse' | 'shortcuts' | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [sidebarOpen, setSidebarOpen] = useState(false);
  // Opening a conversation (sidebar, switcher, a new DM or channel) puts the caret in its composer, as Slack does.
  const [focusComposer, setFocusComposer] = useState(0);

  // The tab title counts what is unread everywhere.
  const total = client.store.totalUnread();
  const titleOf = conversationId && client.store.isConversation(conversationId) ? conversationTitle(client, conversationId) : null;
  useEffect(() => {
    document.title = `${total ? `(${total}) ` : ''}${titleOf ? `${titleOf} · ` : ''}Axid`;
  }, [total, titleOf]);

  // A permalink (or a search result, which navigates to one) opens its message once the conversation is open.
  useEffect(() => {
    if (!conversationId) return;
    client.open(conversationId).then(
      () => (setError(null), messageId ? client.jumpTo(conversationId, messageId) : undefined),
      (err) => setError(errorMessage(err)),
    );
  }, [conversationId, messageId]);

  // Read at key time, not captured: effects run after paint, so a listener
  // re-added per render would miss an Escape pressed right after a dialog opens.
  const shown = useRef({ dialog, panel });
  shown.current = { dialog, panel };
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'k') {
        e.preventDefault();
        setDialog('switcher');
      } else if (e.key === 'Escape') {
        if (shown.current.dialog) setDialog(null);
        else if (client.openThread) client.closeThread();
        else if (shown.current.panel) setPanel(null);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  const open = (id: string) => {
    setSidebarOpen(false);
    setFocusComposer((n) => n + 1);
    navigate(conversationPath(id));
  };
  // ---- habits (issue 34): Alt+↑/↓, the shortcut help, the Threads and All unreads views ----
  useShortcuts({ current: conversationId, onOpen: open, onHelp: () => setDialog('shortcuts') });
  /** Opens a message where it lives, from a view that then closes (a thread opens at its reply). */
  const openMessage = (channelId: string, messageId: string) => {
    setPanel(null);
    setSidebarOpen(false);
    if (location.pathname === messagePath(channelId, messageId)) void client.jumpTo(channelId, messageId);
    else navigate(messagePath(channelId, messageId));
  };
  const togglePanel = (p: 'threads' | 'unreads') => (setSidebarOpen(false), setPanel(panel === p ? null : p));
  // ---- end ----
  const s = client.store;
  const channel = conversationId ? s.channels.get(conversationId) : undefined;
  const known = conversationId ? s.isConversation(conversationId) : false;
  const member = !channel || s.memberOf.has(channel.id);
  // Level 3: an archived channel is read-only (its composer is a notice; no leaving, renaming or posting).
  const archived = isArchived(channel);
  // A pin opens where its message lives, as a search result does (the permalink's path).
  const jumpToMessage = (m: Message) => {
    setSidebarOpen(false);
    if (location.pathname === messagePath(m.channel_id, m.id)) void client.jumpTo(m.channel_id, m.id);
    else navigate(messagePath(m.channel_id, m.id));
  };
  const typing = conversationId ? s.typingIn(conversationId) : [];
  // Level 3: an agent's working status shows where typing does ("Deploybot is reading the logs…").
  const working = conversationId ? s.agentStatusesIn(conversationId) : [];
  const typingLine = [
    ...working.map((w) => `${displayName(s.users.get(w.userId))} ${w.status}`),
    ...(typing.length ? [`${typing.map((u) => displayName(s.users.get(u))).join(', ')} ${typing.length === 1 ? 'is' : 'are'} typing…`] : []),
  ].join(' · ');
  const thread = client.openThread ? s.messages.get(client.openThread) : undefined;
  // One polite live region announces the newest message from someone else (the list itself stays quiet).
  const latest = conversationId ? s.list(conversationId).findLast((m) => m.author_id !== s.me?.id) : undefined;
  const announcement = latest ? `${latest.display?.username || displayName(latest.author_id ? s.users.get(latest.author_id) : null)}: ${latest.content.slice(0, 200)}` : '';

  return (
    <div class={`chat${sidebarOpen ? ' sidebar-open' : ''}`}>
      {/* The first Tab stop: past the sidebar and the header, to the message box (else the conversation). */}
      <a
        class="skip-link"
        href="#conversation"
        onClick={(e) => {
          e.preventDefault();
          (document.querySelector<HTMLElement>('#conversation .composer textarea') ?? document.getElementById('conversation'))?.focus();
        }}
      >
        Skip to the message box
      </a>
      <Sidebar
        current={conversationId}
        onOpen={open}
        onCreate={() => setDialog('create')}
        onSwitcher={() => setDialog('switcher')}
        onSettings={() => navigate('/settings')}
        onNewMessage={() => setDialog('newMessage')}
        onPeople={() => setDialog('people')}
        onProfile={() => setDialog('profile')}
        onBrowse={s.features.teamChat ? () => setDialog('browse') : undefined}
        onThreads={() => togglePanel('threads')}
        onUnreads={() => togglePanel('unreads')}
        onShortcuts={() => setDialog('shortcuts')}
        view={panel === 'threads' || panel === 'unreads' ? panel : null}
      />
      {sidebarOpen ? <div class="backdrop" aria-hidden="true" onClick={() => setSidebarOpen(false)} /> : null}
      <main id="conversation" tabIndex={-1} class="conversation" aria-label={conversationId ? conversationTitle(client, conversationId) : 'No conversation'}>
        <header class="conv-header">
          <button class="icon menu" aria-label="Show conversations" onClick={() => setSidebarOpen(!sidebarOpen)}><Icon name="menu" size={20} /></button>
          {/* On narrow screens the sidebar (and its announced status) is hidden: the state shows here too. */}
          <SearchBox onResults={setSearch} />
          <span class={`conn conn-${client.streamState} narrow-only`} aria-hidden="true">{connectionLabel(client)}</span>
          {conversationId && known ? (
            <>
              <h1>{conversationTitle(client, conversationId)}</h1>
              {channel?.is_private ? <span class="tag">private</span> : null}
              {archived ? <span class="tag">archived</span> : null}
              {channel?.description ? <span class="muted desc">{channel.description}</span> : null}
              <span class="spacer" />
              {channel && !member ? (
                <button class="btn btn-primary small" onClick={() => void client.addMember(channel.id, s.me!.id).catch((err) => setError(errorMessage(err)))}>
                  Join channel
                </button>
              ) : null}
              {channel && member && !archived ? (
                <button class="btn small" onClick={() => void client.removeMember(channel.id, s.me!.id).catch((err) => setError(errorMessage(err)))}>
                  Leave
                </button>
              ) : null}
              {channel ? (
                <button class="btn small" aria-expanded={panel === 'members'} onClick={() => setPanel(panel === 'members' ? null : 'members')}>
                  Members
                </button>
              ) : null}
              {s.features.teamChat ? (
                <button class="btn small" aria-expanded={panel === 'pins'} onClick={() => setPanel(panel === 'pins' ? null : 'pins')}>
                  Pins
                </button>
              ) : null}
              {channel && (member || client.isAdmin()) && !archived ? (
                <button class="btn small" onClick={() => setDialog('channelSettings')}>Channel settings</button>
              ) : null}
              <button
                class="btn small"
                aria-pressed={client.prefs.isMuted(conversationId)}
                title="No desktop notifications from this conversation"
                onClick={() => client.setMuted(conversationId, !client.prefs.isMuted(conversationId))}
              >
                {client.prefs.isMuted(conversationId) ? 'Muted' : 'Mute'}
              </button>
            </>
          ) : (
            <h1>Axid</h1>
          )}
        </header>
        {error ? <p class="error banner" role="alert">{error}</p> : null}
        {client.jumpProblem ? <p class="error banner" role="alert">{client.jumpProblem}</p> : null}
        <ReconnectBanner />
        <NotificationsPrompt />
        <p class="sr-only" aria-live="polite">{announcement}</p>
        {conversationId && known ? (
          <>
            <Timeline timelineKey={conversationId} conversationId={conversationId} />
            {/* Level 3 agents: prompts in an empty DM with one, and what only this person sees. */}
            <SuggestedPrompts conversationId={conversationId} />
            <EphemeralMessages timelineKey={conversationId} />
            <p class="typing" aria-live="polite">
              {typingLine}
            </p>
            {archived && channel ? <ArchivedNotice channelId={channel.id} /> : member ? <Composer key={conversationId} conversationId={conversationId} threadId={null} focusRequest={focusComposer} label={`Message ${conversationTitle(client, conversationId)}`} /> : <p class="muted join-hint">Join the channel to post.</p>}
          </>
        ) : (
          <div class="empty">
            <p>{conversationId ? 'This conversation does not exist or you cannot see it.' : 'Pick a channel on the left, or create one.'}</p>
          </div>
        )}
      </main>
      {thread && conversationId ? (
        <aside class="panel thread" aria-label="Thread">
          <header>
            <h2>Thread</h2>
            <button class="icon" aria-label="Close thread" onClick={() => client.closeThread()}><Icon name="close" /></button>
          </header>
          <div class="thread-root">
            <MessageItem message={thread} grouped={false} inThread />
          </div>
          <Timeline timelineKey={threadKey(thread.id)} conversationId={conversationId} inThread />
          <EphemeralMessages timelineKey={threadKey(thread.id)} />
          {archived ? null : <Composer key={thread.id} conversationId={conversationId} threadId={thread.id} label="Reply in thread" />}
        </aside>
      ) : null}
      {search ? (
        <SearchResults
          query={search}
          onClose={() => setSearch(null)}
          onJump={(m) => {
            setSidebarOpen(false);
            // The permalink's path: the same loading, scrolling and highlighting as a pasted link.
            if (location.pathname === messagePath(m.channel_id, m.id)) void client.jumpTo(m.channel_id, m.id);
            else navigate(messagePath(m.channel_id, m.id));
          }}
        />
      ) : null}
      {panel === 'members' && channel ? <MembersPanel channelId={channel.id} onClose={() => setPanel(null)} /> : null}
      <Suspense fallback={null}>
        {panel === 'pins' && conversationId && known ? <PinsPanel conversationId={conversationId} onClose={() => setPanel(null)} onJump={jumpToMessage} /> : null}
        {dialog === 'browse' ? <BrowseChannels onClose={() => setDialog(null)} onOpen={open} /> : null}
      </Suspense>
      {panel === 'threads' ? <ThreadsPanel onClose={() => setPanel(null)} onOpen={openMessage} /> : null}
      {panel === 'unreads' ? <UnreadsPanel onClose={() => setPanel(null)} onOpen={openMessage} /> : null}
      {dialog === 'create' ? <CreateChannel onClose={() => setDialog(null)} onCreated={open} /> : null}
      {dialog === 'switcher' ? <Switcher onClose={() => setDialog(null)} onPick={open} /> : null}
      {dialog === 'newMessage' ? <NewMessage onClose={() => setDialog(null)} onOpen={open} /> : null}
      {dialog === 'people' ? <PeopleDirectory onClose={() => setDialog(null)} onOpen={open} /> : null}
      {dialog === 'profile' ? <Profile onClose={() => setDialog(null)} /> : null}
      {dialog === 'shortcuts' ? <ShortcutHelp onClose={() => setDialog(null)} /> : null}
      {dialog === 'channelSettings' && channel ? <ChannelSettings channel={channel} onClose={() => setDialog(null)} /> : null}
    </div>
  );
}

/**
 * Offers desktop notifications in the chat, as Slack does, until the person
 * answers (Turn on asks the browser, from this click; Not now is remembered).
 */
function NotificationsPrompt() {
  const client = useStore();
  if (typeof Notification === 'undefined' || Notification.permission === 'denied' || client.prefs.notificationsDecided) return null;
  return (
    <p class="banner notify-prompt" role="region" aria-label="Desktop notifications">
      Get a desktop notification when someone mentions you or writes to you directly.{' '}
      <button class="btn btn-primary small" onClick={() => void client.enableNotifications()}>Turn on notifications</button>{' '}
      <button class="btn small" onClick={() => client.disableNotifications()}>Not now</button>
    </p>
  );
}

/** In place of the composer of an archived channel (level 3): it is read-only; those allowed can unarchive it here. */
function ArchivedNotice({ channelId }: { channelId: string }) {
  const client = useStore();
  const channel = client.store.channels.get(channelId)!;
  const [error, setError] = useState<string | null>(null);
  return (
    <div class="archived-notice" role="status">
      <p>
        This channel was archived on {new Date(channel.archived_at!).toLocaleDateString()}. You can read it, but nobody can post, react or pin here.{' '}
        {client.team.mayArchive(channel) ? (
          <button class="btn small" onClick={() => void client.team.setArchived(channelId, false).then(() => setError(null), (err) => setError(errorMessage(err)))}>
            Unarchive
          </button>
        ) : null}
      </p>
      {error ? <p class="error" role="alert">{error}</p> : null}
    </div>
  );
}

/** Says what happens while the stream is down (the sidebar's badge is small and hidden on phones). */
function ReconnectBanner() {
  const client = useStore();
  if (client.streamState !== 'reconnecting') return null;
  const wait = client.streamRetryInMs ? ` in ${Math.ceil(client.streamRetryInMs / 1000)} s` : '';
  return (
    <p class="banner reconnect" role="status">
      Connection lost. Reconnecting{wait}; messages sent meanwhile appear when it is back.{' '}
      <button class="link" onClick={() => client.reconnectNow()}>Try now</button>
    </p>
  );
}

function MembersPanel({ channelId, onClose }: { channelId: string; onClose(): void }) {
  const client = useStore();
  const [members, setMembers] = useState<ChannelMember[] | null>(null);
  const [adding, setAdding] = useState('');
  const [error, setError] = useState<string | null>(null);
  const load = () => client.channelMembers(channelId).then(setMembers, (err) => setError(errorMessage(err)));
  useEffect(() => void load(), [channelId, client.store.version]);
  const inside = new Set(members?.map((m) => m.user_id));
  const candidates = [...client.store.users.values()].filter((u) => !inside.has(u.id));
  const run = (fn: () => Promise<unknown>) => void fn().then(() => (setError(null), load()), (err) => setError(errorMessage(err)));
  return (
    <aside class="panel" aria-label="Channel members">
      <header>
        <h2>Members</h2>
        <button class="icon" aria-label="Close members" onClick={onClose}><Icon name="close" /></button>
      </header>
      {error ? <p class="error" role="alert">{error}</p> : null}
      <form class="row" onSubmit={(e) => (e.preventDefault(), adding && run(() => client.addMember(channelId, adding)))}>
        <label class="sr-only" for="add-member">Add a member</label>
        <select id="add-member" value={adding} onChange={(e) => setAdding(e.currentTarget.value)}>
          <option value="">Add someone…</option>
          {candidates.map((u) => (
            <option key={u.id} value={u.id}>
              {displayName(u)} (@{u.name}){u.is_agent ? ' — bot' : ''}
            </option>
          ))}
        </select>
        <button class="btn btn-primary small" type="submit" disabled={!adding}>Add</button>
      </form>
      <ul class="members">
        {members?.map((m) => (
          <li key={m.user_id}>
            <span>{displayName(m.user)}</span>
            {m.user.is_agent ? <span class="badge">bot</span> : null}
            <span class="spacer" />
            <button class="btn small" aria-label={`Remove ${displayName(m.user)}`} onClick={() => run(() => client.removeMember(channelId, m.user_id))}>
              Remove
            </button>
          </li>
        ))}
        {members === null ? <li class="muted">Loading…</li> : null}
      </ul>
    </aside>
  );
}

function CreateChannel({ onClose, onCreated }: { onClose(): void; onCreated(id: string): void }) {
  const client = useStore();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [isPrivate, setPrivate] = useState(false);
  const [isDefault, setDefault] = useState(false);
  const [parent, setParent] = useState('');
  const [error, setError] = useState<string | null>(null);
  const parents = [...client.store.channels.values()].filter((c) => !c.parent_channel_id && client.store.memberOf.has(c.id));
  const [touched, setTouched] = useState(false);
  const problem = channelNameProblem(name);
  const submit = async (e: Event) => {
    e.preventDefault();
    setTouched(true);
    if (problem) return;
    try {
      const c = await client.createChannel({
        name,
        ...(description ? { description } : {}),
        is_private: isPrivate,
        ...(isDefault ? { is_default: true } : {}),
        ...(parent ? { parent_channel_id: parent } : {}),
      });
      onClose();
      onCreated(c.id);
    } catch (err) {
      setError(errorMessage(err));
    }
  };
  return (
    <Dialog title="Create a channel" onClose={onClose}>
      <form class="form" onSubmit={submit} noValidate>
        <label>
          Name
          <input data-autofocus value={name} aria-invalid={touched && problem ? 'true' : undefined} aria-describedby="new-channel-problem" onInput={(e) => (setName(e.currentTarget.value), setTouched(true))} />
        </label>
        <p id="new-channel-problem" class={touched && problem ? 'error' : 'sr-only'} aria-live="polite">{touched ? problem ?? '' : ''}</p>
        <label>
          Description
          <input value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </label>
        <label class="check">
          <input type="checkbox" checked={isPrivate} onChange={(e) => setPrivate(e.currentTarget.checked)} /> Private (members only)
        </label>
        {client.isAdmin() ? (
          <label class="check">
            <input type="checkbox" checked={isDefault} onChange={(e) => setDefault(e.currentTarget.checked)} /> Default (new agents join it)
          </label>
        ) : null}
        <label>
          Inside channel (sub-channel)
          <select value={parent} onChange={(e) => setParent(e.currentTarget.value)}>
            <option value="">None</option>
            {parents.map((c) => (
              <option key={c.id} value={c.id}>#{c.name}</option>
            ))}
          </select>
        </label>
        {error ? <p class="error" role="alert">{error}</p> : null}
        <div class="row">
          <button class="btn" type="button" onClick={onClose}>Cancel</button>
          <button class="btn btn-primary" type="submit">Create</button>
        </div>
      </form>
    </Dialog>
  );
}

function Switcher({ onClose, onPick }: { onClose(): void; onPick(id: string): void }) {
  const client = useStore();
  const [q, setQ] = useState('');
  const [active, setActive] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const s = client.store;
  // A person with a 1:1 DM is listed once, as that DM; others as "open a DM".
  const withDm = new Set([...s.dms.values()].filter((d) => d.kind !== 'group_dm').flatMap((d) => d.member_ids.filter((u) => u !== s.me?.id)));
  const items = [
    ...[...s.channels.values()].map((c) => ({ id: c.id, label: `${c.is_private ? '🔒' : '#'}${c.name}`, user: null as string | null })),
    ...[...s.dms.keys()].map((id) => ({ id, label: conversationTitle(client, id), user: null as string | null })),
    ...[...s.users.values()]
      .filter((u) => u.id !== s.me?.id && !withDm.has(u.id))
      .map((u) => ({ id: `user:${u.id}`, label: `${displayName(u)} (direct message)${u.is_agent ? ' · bot' : ''}`, user: u.id })),
  ].filter((i) => i.label.toLowerCase().includes(q.toLowerCase())).slice(0, 12);
  const choose = async (i: (typeof items)[number] | undefined) => {
    if (!i) return;
    try {
      const id = i.user ? (await client.openDm([i.user])).id : i.id;
      onClose();
      onPick(id);
    } catch (err) {
      setError(errorMessage(err));
    }
  };
  return (
    <Dialog title="Jump to a conversation" onClose={onClose}>
      <input
        data-autofocus
        class="switcher-input"
        role="combobox"
        aria-expanded="true"
        aria-controls="switcher-list"
        aria-activedescendant={items.length ? `switcher-${active}` : undefined}
        aria-label="Search channels and people"
        placeholder="Channel or person"
        value={q}
        onInput={(e) => (setQ(e.currentTarget.value), setActive(0))}
        onKeyDown={(e) => {
          if (e.key === 'ArrowDown') (e.preventDefault(), setActive(Math.min(active + 1, items.length - 1)));
          else if (e.key === 'ArrowUp') (e.preventDefault(), setActive(Math.max(active - 1, 0)));
          else if (e.key === 'Enter') (e.preventDefault(), void choose(items[active]));
        }}
      />
      {error ? <p class="error" role="alert">{error}</p> : null}
      <ul class="switcher-list" role="listbox" id="switcher-list">
        {items.map((i, n) => (
          <li key={i.id} id={`switcher-${n}`} role="option" aria-selected={n === active} class={n === active ? 'active' : ''} onMouseDown={(e) => (e.preventDefault(), void choose(i))}>
            {i.label}
          </li>
        ))}
        {items.length === 0 ? <li class="muted">Nothing matches.</li> : null}
      </ul>
    </Dialog>
  );
}
