// `/` in the composer (level 3, docs/bots.md "Slash commands"): the agents'
// commands offered as the person types the name (a listbox the text box
// drives, as mentions are), and a message starting with a command's name
// invoked instead of posted. The list is fetched when `/` is first typed.
import { useEffect, useState } from 'preact/hooks';
import { CommandError, commandQuery, invokeCommand, matchCommands, parseCommand, workspaceCommands, type Command } from '../lib/agents.js';
import type { AxidClient } from '../lib/client.js';
import { displayName, useClient } from './context.js';

/** The commands matching what is typed (empty when the box does not start with `/name`). */
export function useCommandMatches(client: AxidClient, text: string): Command[] {
  const [commands, setCommands] = useState<Command[] | null>(null);
  const query = client.store.features.agents ? commandQuery(text) : null;
  useEffect(() => {
    if (query !== null && !commands) void workspaceCommands(client).then(setCommands, () => undefined);
  }, [query !== null]);
  return query === null || !commands ? [] : matchCommands(commands, query);
}

/**
 * When the text is a command (`/name text`), invokes it and says what was
 * done; null when the text is a message to post. A name no agent offers is
 * refused rather than posted (as in Slack), so a typo never reaches the room.
 */
export async function runCommand(client: AxidClient, o: { conversationId: string; threadId: string | null; text: string }): Promise<string | null> {
  const parsed = client.store.features.agents ? parseCommand(o.text) : null;
  if (!parsed) return null;
  const command = (await workspaceCommands(client)).find((c) => c.name === parsed.name);
  if (!command) throw new CommandError(`/${parsed.name} is not a command in this workspace. Type / to see the commands; to post text starting with /, put a space before it.`);
  await invokeCommand(client, { conversationId: o.conversationId, threadId: o.threadId, command, text: parsed.text });
  return `/${command.name} sent to ${displayName(client.store.users.get(command.user_id))}.`;
}

export function CommandList({ id, matches, active, onPick }: { id: string; matches: Command[]; active: number; onPick(c: Command): void }) {
  const client = useClient();
  return (
    <ul class="mention-list command-list" role="listbox" id={id} aria-label="Commands">
      {matches.map((c, i) => (
        <li key={c.name} id={`${id}-${i}`} role="option" aria-selected={i === active} class={i === active ? 'active' : ''} onMouseDown={(e) => (e.preventDefault(), onPick(c))}>
          <span class="command-name">{c.usage || `/${c.name}`}</span> <span class="muted">{c.description}</span>
          <span class="muted command-agent"> · {displayName(client.store.users.get(c.user_id))}</span>
        </li>
      ))}
    </ul>
  );
}
