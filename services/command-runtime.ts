// What the import and export commands run on: the deployment's database and
// storage, from the one config loader and the same dependency resolution as
// the service (shared/embedded.ts: with EMBEDDED=auto and no S3_ENDPOINT,
// the embedded store's folder under DATA_DIR). No role is started: events
// and jobs go through the outbox tables, which the running service's relay
// and job publisher poll.
import { loadConfig } from '../shared/config.js';
import { createDb } from '../shared/db/knex.js';
import { migrationSource } from '../shared/db/migrate.js';
import { resolveDependencies } from '../shared/embedded.js';
import { CommitListeners } from '../shared/events.js';
import { JobWakeups } from '../shared/job-wakeups.js';
import { createLogger } from '../shared/logger.js';
import { isUuid } from '../shared/ids.js';
import { OutboundFetcher } from '../shared/http/outbound-fetch.js';
import { createS3Client } from './stores.js';
import type { ImportDeps } from './core/imports/slack-import.js';
import { firstWorkspace } from './core/imports/slack-import.store.js';

export async function openCommandRuntime(workspace: string | undefined) {
  const config = loadConfig();
  // Logs to stderr, warnings and worse: stdout carries the report.
  const log = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel, 2);
  const deps = await resolveDependencies(config, log);
  const db = createDb(deps.databaseUrl, 4, log);
  const fail = async (message: string): Promise<never> => {
    await db.destroy();
    await deps.stop();
    process.stderr.write(`${message}\n`);
    process.exit(1);
  };
  const [, pending] = (await db.migrate.list({ migrationSource }).catch(() => [[], ['?']])) as [unknown[], unknown[]];
  if (pending.length) await fail('the database is not migrated (or not reachable): run `npm run migrate` first, with the same DATABASE_URL');
  if (workspace !== undefined && !isUuid(workspace)) await fail(`--workspace: "${workspace}" is not a workspace id (a uuid)`);
  const workspaceId = workspace ?? (await firstWorkspace(db));
  if (!workspaceId) await fail('the database has no workspace yet: start Axid once (or run `npm run migrate`) first');
  if (workspace !== undefined && !(await db('workspaces').where({ id: workspace }).first('id'))) await fail(`--workspace: no workspace ${workspace}`);
  const s3 = createS3Client(config, deps.s3Endpoint);
  const importDeps: ImportDeps = {
    db,
    s3,
    bucket: config.s3.bucket,
    log,
    events: new CommitListeners(),
    jobs: new JobWakeups(),
    baseUrl: config.publicBaseUrl,
    allowPrivate: config.eventDelivery.allowPrivate,
    outbound: new OutboundFetcher(config.outbound),
    blockRules: { trackerHosts: config.trackerHosts, codeHosts: config.codeHosts },
  };
  return {
    deps: importDeps,
    workspaceId: workspaceId!,
    config,
    async close() {
      s3.destroy();
      await db.destroy();
      await deps.stop();
    },
  };
}
