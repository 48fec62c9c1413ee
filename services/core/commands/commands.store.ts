import type { Db, Knex } from '../../../shared/db/knex.js';
import type { CommandRow } from './commands.presenter.js';

/** Replaces an agent's commands with `commands` (in the caller's transaction). */
export async function replaceCommands(trx: Knex.Transaction, workspaceId: string, userId: string, commands: { name: string; description: string; usage?: string }[]) {
  await trx('agent_commands').where({ user_id: userId }).delete();
  if (commands.length === 0) return [] as CommandRow[];
  // A removed agent's names are free again.
  await trx.raw(
    `DELETE FROM agent_commands c USING users u
      WHERE u.id = c.user_id AND u.deactivated_at IS NOT NULL AND c.workspace_id = ? AND c.name = ANY(?::text[])`,
    [workspaceId, commands.map((c) => c.name)],
  );
  return (await trx('agent_commands')
    .insert(commands.map((c) => ({ workspace_id: workspaceId, user_id: userId, name: c.name, description: c.description, usage: c.usage ?? null })))
    .returning('*')) as CommandRow[];
}

/** A page of the workspace's commands, in the order declared (`limit + 1` rows); a removed agent's are left out. */
export const listCommands = (db: Db, workspaceId: string, o: { after?: number; limit: number }) =>
  db('agent_commands as c')
    .join('users as u', 'u.id', 'c.user_id')
    .where('c.workspace_id', workspaceId)
    .whereNull('u.deactivated_at')
    .modify((q) => {
      if (o.after !== undefined) q.where('c.seq', '>', o.after);
    })
    .orderBy('c.seq')
    .limit(o.limit + 1)
    .select('c.*') as Promise<(CommandRow & { seq: number })[]>;

export const findCommand = (db: Db, workspaceId: string, name: string) =>
  db('agent_commands').where({ workspace_id: workspaceId, name }).first() as Promise<CommandRow | undefined>;
