// The workspace's system agent, "Axid" (level 3, contract §14): it sends
// reminders. No key is ever issued to it and it has no password or email, so
// no one can sign in as it. Made at bootstrap at level 3, and for any other
// workspace the first time it needs it (not by a migration, nor at level 2:
// a level-2 workspace's member list stays as it was), once:
// workspaces.system_agent_id is set under the workspace row's lock.
import { randomBytes } from 'node:crypto';
import { recordEvents } from '../../../shared/events.js';
import type { LevelSpan } from '../../../shared/feature-level.js';
import type { Knex } from '../../../shared/db/knex.js';
import type { Runtime } from '../../../shared/runtime.js';
import { presentUser, type UserRow } from '../users/users.presenter.js';
import { insertUser } from '../users/users.store.js';

/** The levels a workspace has its system agent at. */
export const SYSTEM_AGENT: LevelSpan = { since: 3 };

export const SYSTEM_AGENT_NAME = 'axid';
export const SYSTEM_AGENT_DISPLAY_NAME = 'Axid';

/**
 * The workspace's system agent, made (once) if it has none; `onCreated` runs
 * in the transaction that makes it.
 */
export async function ensureSystemAgent(db: Knex, workspaceId: string, onCreated?: (trx: Knex.Transaction, user: UserRow) => Promise<void>): Promise<string> {
  const known = await db('workspaces').where({ id: workspaceId }).first('system_agent_id');
  if (known?.system_agent_id) return known.system_agent_id as string;
  return db.transaction(async (trx) => {
    const locked = await trx('workspaces').where({ id: workspaceId }).forUpdate().first('system_agent_id');
    if (locked?.system_agent_id) return locked.system_agent_id as string;
    // Names are unique among active users: a person already called "axid" keeps theirs.
    const taken = await trx('users').where({ workspace_id: workspaceId, name: SYSTEM_AGENT_NAME }).whereNull('deactivated_at').first('id');
    const user = await insertUser(trx, {
      workspace_id: workspaceId,
      name: taken ? `${SYSTEM_AGENT_NAME}-${randomBytes(3).toString('hex')}` : SYSTEM_AGENT_NAME,
      display_name: SYSTEM_AGENT_DISPLAY_NAME,
      avatar_url: null,
      role: 'member',
      is_agent: true,
    });
    await trx('workspaces').where({ id: workspaceId }).update({ system_agent_id: user.id });
    await onCreated?.(trx, user);
    return user.id;
  });
}

/** The system agent's id, made with its `user.created` event where the workspace has none yet. */
export const systemAgentId = (rt: Runtime, workspaceId: string): Promise<string> =>
  ensureSystemAgent(rt.db, workspaceId, (trx, user) =>
    recordEvents(rt, trx, [{ type: 'user.created', to: { scope: 'workspace', workspace_id: workspaceId }, data: { user: presentUser(user) } }]),
  );
