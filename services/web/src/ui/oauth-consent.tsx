// The consent screen of OAuth for MCP clients (contract §15; docs/mcp.md): who
// asks (the client's registered name, and the host the answer goes back to,
// which the client cannot fake), what for (the scopes asked, each can be
// unticked) and where (every conversation, or only some). Allow issues a
// one-time code for the client, bound to this browser's key; Deny tells the
// client no. Either way the browser then goes back to the client.
import { useEffect, useState } from 'preact/hooks';
import { data, errorMessage } from '../lib/api.js';
import type { components } from '../lib/api-schema.js';
import { SCOPE_TEXT } from '../lib/oauth-consent.js';
import { conversationTitle, useStore } from './context.js';

type Authorization = components['schemas']['OAuthAuthorization'];
type Scope = Authorization['scopes'][number];

export function OAuthConsent({ requestId }: { requestId: string }) {
  const client = useStore();
  const [request, setRequest] = useState<Authorization | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [scopes, setScopes] = useState<Scope[]>([]);
  const [onlySome, setOnlySome] = useState(false);
  const [picked, setPicked] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    data(client.api.GET('/api/v1/oauth/authorizations/{authorization_id}', { params: { path: { authorization_id: requestId } } })).then(
      (r) => (setRequest(r), setScopes(r.scopes)),
      (err) => setError(errorMessage(err)),
    );
  }, [requestId]);

  const answer = async (approve: boolean) => {
    setBusy(true);
    try {
      const body = approve ? { approve, scopes, ...(onlySome ? { conversation_ids: picked } : {}) } : { approve };
      const decided = await data(client.api.POST('/api/v1/oauth/authorizations/{authorization_id}', { params: { path: { authorization_id: requestId } }, body }));
      location.assign(decided.redirect_to);
    } catch (err) {
      setError(errorMessage(err));
      setBusy(false);
    }
  };
  const submit = (e: Event) => (e.preventDefault(), void answer(true));
  const toggle = <T,>(list: T[], item: T, on: boolean) => (on ? [...list, item] : list.filter((x) => x !== item));

  if (!request) {
    return (
      <main class="signin">
        <div class="card form signin-card">
          <h1>Connect an app</h1>
          {error ? <p class="error" role="alert">{error} This request may have expired or been answered: start again from the app.</p> : <p class="muted" role="status">Loading the request…</p>}
        </div>
      </main>
    );
  }
  const me = client.store.me;
  const conversations = [...client.store.channels.values()].filter((c) => c.is_member !== false).map((c) => c.id).concat([...client.store.dms.keys()]);
  const canAllow = scopes.length > 0 && (!onlySome || picked.length > 0) && !busy;
  return (
    <main class="signin">
      <form class="card form signin-card oauth-consent" onSubmit={submit} aria-labelledby="oauth-consent-title">
        <h1 id="oauth-consent-title">Connect {request.client.name} to Axid?</h1>
        <p>
          <strong>{request.client.name}</strong> asks to act as you{me ? <> ({me.display_name ?? me.name})</> : null}. After you answer, you go back to{' '}
          <strong data-testid="redirect-host">{request.redirect_host}</strong>.
        </p>
        <p class="muted small">Only allow apps you trust: the name is the one the app gave itself; the address above is where it really runs.</p>
        {error ? <p class="error" role="alert">{error}</p> : null}
        <fieldset class="consent-group">
          <legend>What it may do</legend>
          {request.scopes.map((s) => (
            <label key={s}>
              <input type="checkbox" checked={scopes.includes(s)} onChange={(e) => setScopes(toggle(scopes, s, e.currentTarget.checked))} />
              <span>
                <code>{s}</code> {SCOPE_TEXT[s] ?? ''}
              </span>
            </label>
          ))}
        </fieldset>
        <fieldset class="consent-group">
          <legend>Where</legend>
          <label>
            <input type="radio" name="where" checked={!onlySome} onChange={() => setOnlySome(false)} /> Every conversation you can read
          </label>
          <label>
            <input type="radio" name="where" checked={onlySome} onChange={() => setOnlySome(true)} /> Only the ones I choose
          </label>
          {onlySome ? (
            <div class="pick-people" role="group" aria-label="Conversations it may use">
              {conversations.map((id) => (
                <label key={id}>
                  <input type="checkbox" checked={picked.includes(id)} onChange={(e) => setPicked(toggle(picked, id, e.currentTarget.checked))} /> {conversationTitle(client, id)}
                </label>
              ))}
            </div>
          ) : null}
        </fieldset>
        <p class="muted small">It gets a key of yours that lasts an hour and renews itself while this browser stays signed in. It is listed under Settings → API keys, where revoking it disconnects the app.</p>
        <div class="row">
          <button class="btn btn-primary" type="submit" disabled={!canAllow}>
            Allow
          </button>
          <button class="btn" type="button" disabled={busy} onClick={() => void answer(false)}>
            Deny
          </button>
        </div>
      </form>
    </main>
  );
}
