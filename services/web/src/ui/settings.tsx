// Workspace settings. Everyone sees their API keys; admins and owners also
// manage people and agents, incoming webhooks and the workspace itself.
import type { ComponentChildren } from 'preact';
import { lazy, Suspense } from 'preact/compat';
import { useEffect, useState } from 'preact/hooks';
import { all, data, errorMessage, page } from '../lib/api.js';
import type { Theme } from '../lib/prefs.js';
import type { ApiKey, Role, User, Webhook, Workspace } from '../lib/types.js';
import { displayName, useStore } from './context.js';
import { CopyButton, ShownOnce } from './copy-button.js';
import { Invites } from './invites.js';
import { PasswordForm, PasswordResetLink, SignInLink } from './password.js';
// Level 3 (ui/email-settings.tsx, ui/slack-import.tsx): the import screen is loaded when opened.
import { EmailNotifications } from './email-settings.js';
const SlackImport = lazy(() => import('./slack-import.js').then((m) => m.SlackImport));
import { KeyLimitsShown, limitsBody, type KeyLimits } from './key-limits.js';
// The form's scopes and conversations (level 3) load when the person opens them.
const KeyLimitsFields = lazy(() => import('./key-limits-form.js').then((m) => ({ default: m.KeyLimitsFields })));

type Tab = 'keys' | 'prefs' | 'people' | 'webhooks' | 'workspace' | 'groups' | 'emoji' | 'import';

// Level 3's user groups and custom emoji (ui/team-settings.tsx), loaded when their tab opens.
const UserGroups = lazy(() => import('./team-settings.js').then((m) => ({ default: m.UserGroups })));
const CustomEmojiSettings = lazy(() => import('./team-settings.js').then((m) => ({ default: m.CustomEmojiSettings })));

export function Settings({ navigate }: { navigate(path: string): void }) {
  const client = useStore();
  const admin = client.isAdmin();
  const [tab, setTab] = useState<Tab>('keys');
  const team: [Tab, string][] = client.store.features.teamChat ? [['groups', 'User groups'], ['emoji', 'Custom emoji']] : [];
  const tabs: [Tab, string][] = [['keys', 'API keys'], ['prefs', 'Preferences'], ...team, ...(admin ? ([['people', 'People and agents'], ['webhooks', 'Incoming webhooks'], ['workspace', 'Workspace']] as [Tab, string][]) : [])];
  // Only owners import (POST /imports/slack answers admins 403).
  if (client.store.features.imports && client.store.me?.role === 'owner') tabs.push(['import', 'Import from Slack']);
  return (
    <div class="settings">
      <header class="conv-header">
        <button class="btn small" onClick={() => navigate('/')}>← Back to chat</button>
        <h1>Settings · {client.store.workspace?.name}</h1>
        <span class="spacer" />
        <button class="btn small" onClick={() => void client.signOut()}>Sign out</button>
      </header>
      <div class="tabs" role="tablist" aria-label="Settings sections">
        {tabs.map(([id, label]) => (
          <button key={id} role="tab" id={`tab-${id}`} aria-selected={tab === id} aria-controls={`section-${id}`} class={tab === id ? 'active' : ''} onClick={() => setTab(id)}>
            {label}
          </button>
        ))}
      </div>
      <section role="tabpanel" id={`section-${tab}`} aria-labelledby={`tab-${tab}`} class="section">
        {tab === 'keys' ? <Keys /> : tab === 'prefs' ? <Preferences /> : tab === 'people' ? <People /> : tab === 'webhooks' ? <Webhooks /> : tab === 'workspace' ? <WorkspaceForm /> : (
          // Level 3's screens, each loaded when its tab first opens.
          <Suspense fallback={<div class="skeleton line w60" role="status" aria-label="Loading" />}>
            {tab === 'groups' ? <UserGroups /> : tab === 'emoji' ? <CustomEmojiSettings /> : <SlackImport />}
          </Suspense>
        )}
      </section>
    </div>
  );
}

function Preferences() {
  const client = useStore();
  const prefs = client.prefs;
  const [error, setError] = useState<string | null>(null);
  const supported = typeof Notification !== 'undefined';
  const denied = supported && Notification.permission === 'denied';
  // At level 3 the choice follows the person to their other devices (client.setTheme).
  const setTheme = (t: Theme) => client.setTheme(t);
  return (
    <>
      <h2>Appearance</h2>
      <fieldset class="choices">
        <legend>Theme</legend>
        {(['system', 'light', 'dark'] as Theme[]).map((t) => (
          <label key={t} class="check">
            <input type="radio" name="theme" checked={prefs.theme === t} onChange={() => setTheme(t)} />
            {t === 'system' ? 'Follow the system' : t === 'light' ? 'Light' : 'Dark'}
          </label>
        ))}
      </fieldset>
      <h2>Desktop notifications</h2>
      <p class="muted">For mentions of you and direct messages; never for your own messages or the conversation you are looking at. Mute a conversation from its header.</p>
      {!supported ? <p class="muted">This browser has no desktop notifications.</p> : null}
      {denied ? <p class="muted">The browser blocks notifications for this site: allow them in its site settings.</p> : null}
      {supported && !denied ? (
        prefs.notifications && Notification.permission === 'granted' ? (
          <button class="btn" onClick={() => client.disableNotifications()}>Turn off desktop notifications</button>
        ) : (
          <button class="btn btn-primary" onClick={() => void client.enableNotifications().then((ok) => setError(ok ? null : 'Notifications were not allowed.'))}>
            Turn on desktop notifications
          </button>
        )
      ) : null}
      <Errors error={error} />
      {client.store.features.emailNotifications ? <EmailNotifications /> : null}
      <h2>For developers</h2>
      <label class="check">
        <input type="checkbox" checked={prefs.devMetadata} onChange={(e) => ((prefs.devMetadata = e.currentTarget.checked), client.store.changed())} /> Show message metadata
      </label>
    </>
  );
}

function useLoad<T>(load: () => Promise<T>, deps: unknown[] = []) {
  const [value, setValue] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const reload = () => load().then((v) => (setValue(v), setError(null)), (err) => setError(errorMessage(err)));
  useEffect(() => void reload(), deps);
  return { value, error, setError, reload };
}

function Secret({ title, value, onDone }: { title: string; value: string; onDone(): void }) {
  return (
    <ShownOnce value={value} testId="secret" copyLabel="Copy the secret" onDone={onDone}>
      <strong>{title}</strong> It is shown only once: copy it now.
    </ShownOnce>
  );
}

const date = (iso: string | null) => (iso ? new Date(iso).toLocaleDateString() : 'never');
const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();

function Errors({ error }: { error: string | null }) {
  return error ? <p class="error" role="alert">{error}</p> : null;
}

function Keys() {
  const client = useStore();
  const { value: keys, error, setError, reload } = useLoad(() => all((cursor) => page(client.api.GET('/api/v1/api-keys', { params: { query: { cursor, limit: 200 } } }))));
  const [name, setName] = useState('');
  const [days, setDays] = useState('30');
  const [secret, setSecret] = useState<string | null>(null);
  // Level 3: the new key's scopes and conversations (key-limits.tsx).
  const [limits, setLimits] = useState<KeyLimits>({ scopes: [], conversationIds: [] });
  const [limitsOpen, setLimitsOpen] = useState(false);
  const create = async (e: Event) => {
    e.preventDefault();
    try {
      const k = await data(client.api.POST('/api/v1/api-keys', { body: { name, ...(days ? { expires_at: inDays(Number(days)) } : {}), ...limitsBody(limits) } }));
      setSecret(k.key ?? null);
      setName('');
      setLimits({ scopes: [], conversationIds: [] });
      void reload();
    } catch (err) {
      setError(errorMessage(err));
    }
  };
  const revoke = async (k: ApiKey) => {
    if (!confirm(`Revoke the key "${k.name}"? Programs using it stop working.`)) return;
    try {
      await data(client.api.DELETE('/api/v1/api-keys/{key_id}', { params: { path: { key_id: k.id } } }));
      void reload();
    } catch (err) {
      setError(errorMessage(err));
    }
  };
  return (
    <>
      {client.store.features.signInLinks ? (
        <>
          <PasswordForm />
          <SignInLink />
        </>
      ) : null}
      <h2>Your API keys</h2>
      {secret ? <Secret title="Your new key." value={secret} onDone={() => setSecret(null)} /> : null}
      <form class="row" onSubmit={create}>
        <label>
          Name <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label>
          Expires
          <select value={days} onChange={(e) => setDays(e.currentTarget.value)}>
            <option value="7">in 7 days</option>
            <option value="30">in 30 days</option>
            <option value="90">in 90 days</option>
            <option value="365">in a year</option>
            <option value="">never</option>
          </select>
        </label>
        {client.store.features.agents ? (
          <details class="key-limits-details" onToggle={(e) => setLimitsOpen(e.currentTarget.open)}>
            <summary>Limit what the key can do{limits.scopes.length + limits.conversationIds.length ? ` (${[...limits.scopes, ...(limits.conversationIds.length ? [`${limits.conversationIds.length} conversation${limits.conversationIds.length === 1 ? '' : 's'}`] : [])].join(', ')})` : ''}</summary>
            {limitsOpen ? (
              <Suspense fallback={<p class="muted">Loading…</p>}>
                <KeyLimitsFields value={limits} onChange={setLimits} />
              </Suspense>
            ) : null}
          </details>
        ) : null}
        <button class="btn btn-primary" type="submit">Create key</button>
      </form>
      <Errors error={error} />
      <Table head={['Name', 'Prefix', 'Created', 'Expires', '']}>
        {keys?.map((k) => (
          <tr key={k.id}>
            <td>
              {k.name}
              {k.id === client.session?.keyId ? <span class="tag">this browser</span> : null}
              {/* A scoped key's limits (level 3; docs/security.md, "Scopes"): absent at level 2 and on keys without them. */}
              <KeyLimitsShown apiKey={k} />
            </td>
            <td><code>{k.prefix}</code></td>
            <td>{date(k.created_at)}</td>
            <td>{date(k.expires_at)}</td>
            <td>
              <button class="btn small btn-danger" aria-label={`Revoke ${k.name}`} onClick={() => void revoke(k)}>Revoke</button>
            </td>
          </tr>
        ))}
      </Table>
      {keys?.length === 0 ? <p class="muted">No keys.</p> : null}
    </>
  );
}

function Table({ head, children }: { head: string[]; children: ComponentChildren }) {
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>{head.map((h, i) => <th key={i} scope="col">{h}</th>)}</tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

function People() {
  const client = useStore();
  const { value: people, error, setError, reload } = useLoad(() => all((cursor) => page(client.api.GET('/api/v1/workspaces/current/members', { params: { query: { cursor, limit: 200 } } }))));
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>('member');
  const [agent, setAgent] = useState(false);
  const [secret, setSecret] = useState<{ name: string; key: string } | null>(null);
  const run = (fn: () => Promise<unknown>) => void fn().then(() => (setError(null), reload()), (err) => setError(errorMessage(err)));
  const create = (e: Event) => {
    e.preventDefault();
    run(async () => {
      const u = await data(
        agent ? client.api.POST('/api/v1/agents', { body: { name, role } }) : client.api.POST('/api/v1/users', { body: { name, role } }),
      );
      setSecret({ name: u.name, key: u.api_key });
      setName('');
    });
  };
  const owner = client.store.me?.role === 'owner';
  return (
    <>
      {client.store.features.signInLinks ? <Invites /> : null}
      <h2>People and agents</h2>
      {secret ? <Secret title={`The key of ${secret.name}.`} value={secret.key} onDone={() => setSecret(null)} /> : null}
      <form class="row" onSubmit={create}>
        <label>
          Name <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label>
          Role
          <select value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
            <option value="member">member</option>
            <option value="admin">admin</option>
            {owner ? <option value="owner">owner</option> : null}
          </select>
        </label>
        <label class="check">
          <input type="checkbox" checked={agent} onChange={(e) => setAgent(e.currentTarget.checked)} /> Agent (bot)
        </label>
        <button class="btn btn-primary" type="submit">{agent ? 'Create agent' : 'Create user'}</button>
      </form>
      <Errors error={error} />
      <Table head={['Name', 'Kind', 'Role', '']}>
        {people?.map((u) => (
          <tr key={u.id}>
            <td>{displayName(u)} <span class="muted">@{u.name}</span></td>
            <td>{u.is_agent ? <span class="badge">bot</span> : 'person'}</td>
            <td>
              <select
                aria-label={`Role of ${u.name}`}
                value={u.role}
                onChange={(e) => run(() => data(client.api.PATCH('/api/v1/workspaces/current/members/{user_id}', { params: { path: { user_id: u.id } }, body: { role: e.currentTarget.value as Role } })))}
              >
                <option value="member">member</option>
                <option value="admin">admin</option>
                {owner || u.role === 'owner' ? <option value="owner">owner</option> : null}
              </select>
            </td>
            <td>
              {client.store.features.signInLinks && !u.is_agent && u.id !== client.store.me?.id ? <PasswordResetLink userId={u.id} name={u.name} /> : null}
              {u.id !== client.store.me?.id ? (
                <button
                  class="btn small btn-danger"
                  aria-label={`Remove ${u.name}`}
                  onClick={() => confirm(`Remove ${u.name} from the workspace?`) && run(() => data(client.api.DELETE('/api/v1/workspaces/current/members/{user_id}', { params: { path: { user_id: u.id } } })))}
                >
                  Remove
                </button>
              ) : null}
            </td>
          </tr>
        ))}
      </Table>
    </>
  );
}

const compatUrl = (url: string) => url.replace(/\/hooks\/([^/]+)$/, '/hooks/compat/$1');

function Webhooks() {
  const client = useStore();
  const { value: hooks, error, setError, reload } = useLoad(() => all((cursor) => page(client.api.GET('/api/v1/webhooks/incoming', { params: { query: { cursor, limit: 200 } } }))));
  const channels = [...client.store.channels.values()];
  const [name, setName] = useState('');
  const [channel, setChannel] = useState('');
  const run = (fn: () => Promise<unknown>) => void fn().then(() => (setError(null), reload()), (err) => setError(errorMessage(err)));
  return (
    <>
      <h2>Incoming webhooks</h2>
      <p class="muted">Anyone with an address can post into its channel: treat it as a secret.</p>
      <form class="row" onSubmit={(e) => (e.preventDefault(), run(async () => (await data(client.api.POST('/api/v1/webhooks/incoming', { body: { name, channel_id: channel } })), setName(''))))}>
        <label>
          Name <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label>
          Channel
          <select required value={channel} onChange={(e) => setChannel(e.currentTarget.value)}>
            <option value="">Choose…</option>
            {channels.map((c) => (
              <option key={c.id} value={c.id}>#{c.name}</option>
            ))}
          </select>
        </label>
        <button class="btn btn-primary" type="submit">Create webhook</button>
      </form>
      <Errors error={error} />
      <ul class="hooks">
        {hooks?.map((h) => (
          <li key={h.id} class="hook" data-webhook-id={h.id}>
            <div>
              <strong>{h.name}</strong> → #{client.store.channels.get(h.channel_id)?.name ?? h.channel_id}
            </div>
            <div class="addr">
              <span class="muted">Native</span> <code data-testid="native-url">{h.url}</code> <CopyButton text={h.url} label={`Copy the native address of ${h.name}`} />
            </div>
            <div class="addr">
              <span class="muted">Slack-compatible</span> <code data-testid="compat-url">{compatUrl(h.url)}</code>{' '}
              <CopyButton text={compatUrl(h.url)} label={`Copy the Slack-compatible address of ${h.name}`} />
            </div>
            <button class="btn small btn-danger" onClick={() => confirm(`Delete the webhook "${h.name}"?`) && run(() => data(client.api.DELETE('/api/v1/webhooks/incoming/{webhook_id}', { params: { path: { webhook_id: h.id } } })))}>
              Delete
            </button>
          </li>
        ))}
        {hooks?.length === 0 ? <li class="muted">No webhooks yet.</li> : null}
      </ul>
    </>
  );
}

function WorkspaceForm() {
  const client = useStore();
  const ws = client.store.workspace!;
  const [name, setName] = useState(ws.name);
  const [maxUsers, setMaxUsers] = useState(ws.settings?.max_users ? String(ws.settings.max_users) : '');
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const save = async (e: Event) => {
    e.preventDefault();
    try {
      const updated = await data(client.api.PATCH('/api/v1/workspaces/current', { body: { name, settings: { max_users: maxUsers ? Number(maxUsers) : null } } }));
      client.store.workspace = updated;
      client.store.changed();
      setSaved(true);
      setError(null);
    } catch (err) {
      setError(errorMessage(err));
    }
  };
  return (
    <form class="form" onSubmit={save}>
      <h2>Workspace</h2>
      <label>
        Name <input required value={name} onInput={(e) => (setName(e.currentTarget.value), setSaved(false))} />
      </label>
      <label>
        Most human users (empty: no limit; agents never count)
        <input type="number" min={1} value={maxUsers} onInput={(e) => (setMaxUsers(e.currentTarget.value), setSaved(false))} />
      </label>
      <Errors error={error} />
      {saved ? <p role="status">Saved.</p> : null}
      <button class="btn btn-primary" type="submit">Save</button>
    </form>
  );
}
