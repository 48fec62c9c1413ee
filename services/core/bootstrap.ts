import type { Knex } from '../../shared/db/knex.js';
import type { Logger } from '../../shared/logger.js';
import { insertChannel, insertMember } from './channels/channels.store.js';
import { countWorkspaces } from './workspaces/workspaces.store.js';
import { createWorkspaceWithOwner } from './workspaces/workspaces.service.js';
import { ensureSystemAgent } from './workspaces/system-agent.js';

export interface BootstrapOptions {
  /** BOOTSTRAP_ADMIN_KEY: the owner's first key; without it a fresh one is printed once. */
  adminKey?: string;
  /** Whether the system agent exists at this level (the composition root decides: SYSTEM_AGENT). */
  systemAgent: boolean;
}

/**
 * First start against an empty database: a workspace, its owner and the
 * owner's first key (BOOTSTRAP_ADMIN_KEY, or a fresh one printed once), and
 * `#general`, a default channel with the owner in it, so the first people and
 * agents have somewhere to meet (as Slack's and Mattermost's first channel).
 * All in one transaction; it runs under the migration lock, so replicas
 * starting together make one. (Nobody listens yet: no events are recorded.)
 */
export async function bootstrapWorkspace(db: Knex, o: BootstrapOptions, log: Logger): Promise<void> {
  if ((await countWorkspaces(db)) > 0) return;
  const created = await db.transaction(async (trx) => {
    const made = await createWorkspaceWithOwner(trx, { name: 'Axid', ownerName: 'owner', key: o.adminKey });
    const general = await insertChannel(trx, {
      workspace_id: made.workspace.id,
      name: 'general',
      description: 'Everyone in the workspace',
      is_private: false,
      is_default: true,
      parent_channel_id: null,
      team_id: null,
      created_by: made.owner.id,
    });
    await insertMember(trx, { channel_id: general.id, user_id: made.owner.id, workspace_id: made.workspace.id });
    return made;
  });
  log.info({ workspace_id: created.workspace.id, owner_id: created.owner.id }, 'bootstrap: created the workspace, its owner and #general');
  // Level 3: the system agent "Axid" that sends reminders (contract §14); no one listens yet, so no event.
  if (o.systemAgent) await ensureSystemAgent(db, created.workspace.id);
  if (!o.adminKey) {
    process.stdout.write(`\nAxid owner API key (shown once, keep it safe):\n  ${created.key}\n\n`);
  }
}
