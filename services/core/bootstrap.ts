import type { Knex } from '../../shared/db/knex.js';
import type { Config } from '../../shared/config.js';
import type { Logger } from '../../shared/logger.js';
import { countWorkspaces } from './workspaces/workspaces.store.js';
import { createWorkspaceWithOwner } from './workspaces/workspaces.service.js';
import { ensureSystemAgent } from './workspaces/system-agent.js';

/**
 * First start against an empty database: a workspace, its owner and the
 * owner's first key (BOOTSTRAP_ADMIN_KEY, or a fresh one printed once).
 * Runs under the migration lock, so replicas starting together make one.
 */
export async function bootstrapWorkspace(db: Knex, config: Config, log: Logger): Promise<void> {
  if ((await countWorkspaces(db)) > 0) return;
  const created = await createWorkspaceWithOwner(db, { name: 'Axid', ownerName: 'owner', key: config.bootstrapAdminKey });
  log.info({ workspace_id: created.workspace.id, owner_id: created.owner.id }, 'bootstrap: created the workspace and its owner');
  // Level 3: the system agent "Axid" that sends reminders (contract §14); no one listens yet, so no event.
  if (config.featureLevel >= 3) await ensureSystemAgent(db, created.workspace.id);
  if (!config.bootstrapAdminKey) {
    process.stdout.write(`\nAxid owner API key (shown once, keep it safe):\n  ${created.key}\n\n`);
  }
}
