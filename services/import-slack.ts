// `npm run import:slack -- <export.zip> [--dry-run] [--files-from <dir>]
// [--default-email-domain <domain>] [--workspace <id>] [--json]`: imports a
// Slack export into the deployment's workspace (contract §13,
// docs/migrating-from-slack.md), with the settings the service runs with
// (shared/config.ts: DATABASE_URL, S3_*). Any feature level. Exits 0 with
// the report, 1 with a message naming what is wrong.
import { parseArgs } from 'node:util';
import { AppError } from '../shared/errors.js';
import { formatReport, progressPrinter } from './core/imports/cli-progress.js';
import { importSlackExport } from './core/imports/slack-import.js';
import { openCommandRuntime } from './command-runtime.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    'dry-run': { type: 'boolean', default: false },
    'files-from': { type: 'string' },
    'default-email-domain': { type: 'string' },
    workspace: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});

if (positionals.length !== 1) {
  process.stderr.write('usage: npm run import:slack -- <export.zip> [--dry-run] [--files-from <dir>] [--default-email-domain <domain>] [--workspace <id>] [--json]\n');
  process.exit(2);
}
const domain = values['default-email-domain'];
if (domain !== undefined && !/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i.test(domain)) {
  process.stderr.write(`--default-email-domain: "${domain}" is not a domain name such as example.com\n`);
  process.exit(2);
}

const cmd = await openCommandRuntime(values.workspace);
try {
  const report = await importSlackExport(cmd.deps, positionals[0]!, {
    workspaceId: cmd.workspaceId,
    dryRun: values['dry-run'],
    filesFrom: values['files-from'] ?? null,
    defaultEmailDomain: domain ?? null,
    onProgress: progressPrinter(process.stderr),
  });
  process.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report));
  process.exitCode = 0;
} catch (err) {
  process.stderr.write(`\nimport failed: ${err instanceof AppError ? err.message : (err as Error).message}\n`);
  if (!(err instanceof AppError)) process.stderr.write('Nothing of the batch that failed was written; run the same command again to carry on from there.\n');
  process.exitCode = 1;
} finally {
  await cmd.close();
}
