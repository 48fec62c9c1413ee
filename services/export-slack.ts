// `npm run export:slack -- <out.zip> [--channels a,b] [--workspace <id>]`:
// writes the deployment's workspace (or the named channels) as a Slack export
// ZIP, files in files/ (contract §13, docs/migrating-from-slack.md). Any
// feature level; the settings of shared/config.ts.
import { parseArgs } from 'node:util';
import { AppError } from '../shared/errors.js';
import { progressPrinter } from './core/imports/cli-progress.js';
import { exportSlack } from './core/imports/slack-export.js';
import { openCommandRuntime } from './command-runtime.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { channels: { type: 'string' }, workspace: { type: 'string' } },
});
if (positionals.length !== 1) {
  process.stderr.write('usage: npm run export:slack -- <out.zip> [--channels a,b] [--workspace <id>]\n');
  process.exit(2);
}

const cmd = await openCommandRuntime(values.workspace);
const show = progressPrinter(process.stderr);
try {
  const counts = await exportSlack(cmd.deps, positionals[0]!, {
    workspaceId: cmd.workspaceId,
    channels: values.channels ? values.channels.split(',').map((n) => n.trim()).filter(Boolean) : null,
    onProgress: (p) => show({ phase: p.phase, done: p.done, total: p.total }),
  });
  process.stdout.write(`Exported to ${positionals[0]}:\n${Object.entries(counts).map(([k, v]) => `  ${k.padEnd(10)} ${v}`).join('\n')}\n`);
} catch (err) {
  process.stderr.write(`export failed: ${err instanceof AppError ? err.message : (err as Error).message}\n`);
  process.exitCode = 1;
} finally {
  await cmd.close();
}
