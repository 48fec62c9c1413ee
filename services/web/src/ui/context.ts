// The one client object of the tab, and a hook that re-renders on store changes.
import { createContext } from 'preact';
import { useContext, useEffect, useReducer } from 'preact/hooks';
import type { AxidClient } from '../lib/client.js';

export const ClientContext = createContext<AxidClient | null>(null);

export function useClient(): AxidClient {
  const client = useContext(ClientContext);
  if (!client) throw new Error('no AxidClient in context');
  return client;
}

/** Re-renders the component whenever the store changes; returns the client. */
export function useStore(): AxidClient {
  const client = useClient();
  const [, bump] = useReducer((n: number) => n + 1, 0);
  useEffect(() => client.store.subscribe(() => bump(0)), [client]);
  return client;
}

export const displayName = (u: { name: string; display_name: string | null } | undefined | null) => (u ? u.display_name || u.name : 'Unknown');

/** A conversation's name as people see it: `#name`, or a DM's other people. */
export function conversationTitle(client: ReturnType<typeof useStore>, id: string) {
  const c = client.store.channels.get(id);
  if (c) return `#${c.name}`;
  const dm = client.store.dms.get(id);
  if (!dm) return 'Conversation';
  const others = dm.member_ids.filter((u) => u !== client.store.me?.id);
  return others.map((u) => displayName(client.store.users.get(u))).join(', ') || 'Just you';
}
