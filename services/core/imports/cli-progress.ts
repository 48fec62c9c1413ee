// Progress and the report of the import/export commands, on a terminal or in
// a log: a bar redrawn in place on a TTY, a line every few seconds otherwise
// (a Kubernetes Job's log).
import type { ImportProgress, ImportReport } from './slack-import.js';

const LINE_EVERY_MS = 5_000;

export function progressPrinter(out: NodeJS.WriteStream) {
  let lastLine = 0;
  let lastPhase = '';
  return (p: ImportProgress) => {
    const pct = p.total ? Math.min(100, Math.floor((p.done / p.total) * 100)) : 100;
    if (out.isTTY) {
      const width = 30;
      const filled = Math.round((pct / 100) * width);
      out.write(`\r${p.phase.padEnd(13)} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(pct).padStart(3)}% ${p.done}/${p.total}`);
      if (p.phase === 'done' || (p.done === p.total && p.phase !== 'messages')) out.write('\n');
      return;
    }
    const now = Date.now();
    if (p.phase !== lastPhase || now - lastLine >= LINE_EVERY_MS || p.done === p.total) {
      out.write(`${new Date().toISOString()} ${p.phase}: ${p.done}/${p.total} (${pct}%)\n`);
      lastLine = now;
      lastPhase = p.phase;
    }
  };
}

/** The report as people read it: counts, then every skipped item with its reason. */
export function formatReport(r: ImportReport): string {
  const lines: string[] = [];
  lines.push(r.dry_run ? 'Dry run: nothing was written. This import would add:' : 'Imported:');
  for (const [k, v] of Object.entries(r.counts)) lines.push(`  ${k.padEnd(10)} ${v}`);
  const a = r.already_imported;
  if (a.users || a.conversations || a.messages) {
    lines.push(`Already imported by an earlier run (left as they are): ${a.users} users, ${a.conversations} conversations, ${a.messages} messages`);
  }
  const system = Object.entries(r.system_messages);
  if (system.length) {
    lines.push('Slack system messages not imported (membership and settings come from the export\'s lists):');
    for (const [subtype, n] of system.sort((x, y) => y[1] - x[1])) lines.push(`  ${subtype.padEnd(28)} ${n}`);
  }
  if (r.notes.length) {
    lines.push('Notes:');
    for (const n of r.notes) lines.push(`  - ${n}`);
  }
  lines.push(r.skipped.length ? `Skipped (${r.skipped.length}):` : 'Skipped: nothing');
  for (const s of r.skipped) lines.push(`  - ${s.item}: ${s.reason}`);
  return `${lines.join('\n')}\n`;
}
