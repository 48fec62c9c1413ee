// Scenario results → one table (stdout and RESULTS.md) and JSON.
import { median } from './stats.js';

export type Target = { kind: 'ratio'; op: '>=' | '<='; value: number } | { kind: 'abs'; op: '<' | '<='; value: number; aim?: boolean };

export interface Metric {
  metric: string;
  unit: string;
  axid: number[];
  floor: number[];
  target?: Target;
}

export interface Scenario {
  id: number;
  name: string;
  /** ran: both sides measured; unavailable: the Axid side could not run (floor may still have); failed: the harness hit an error. */
  status: 'ran' | 'unavailable' | 'failed' | 'skipped';
  reason?: string;
  metrics: Metric[];
  notes: string[];
  seconds?: number;
}

export interface Row {
  scenario: string;
  metric: string;
  unit: string;
  axid: number | null;
  floor: number | null;
  ratio: number | null;
  target: string;
  pass: boolean | null;
  axidRounds: number[];
  floorRounds: number[];
}

const targetText = (t: Target | undefined, unit: string) =>
  !t ? '' : t.kind === 'ratio' ? `${t.op === '>=' ? '≥' : '≤'} ${t.value}x` : `${t.aim ? 'aim ' : ''}${t.op === '<' ? '<' : '≤'} ${t.value} ${unit}`;

export function rowsOf(s: Scenario): Row[] {
  const label = `${s.id} ${s.name}`;
  return s.metrics.map((m) => {
    const axid = m.axid.length ? median(m.axid) : null;
    const floor = m.floor.length ? median(m.floor) : null;
    // The median of the per-round ratios: each round's pair ran back to back.
    const pairs = m.axid.map((a, i) => a / (m.floor[i] ?? NaN)).filter((x) => Number.isFinite(x));
    const ratio = pairs.length ? median(pairs) : null;
    let pass: boolean | null = null;
    if (m.target?.kind === 'ratio' && ratio !== null) pass = m.target.op === '>=' ? ratio >= m.target.value : ratio <= m.target.value;
    if (m.target?.kind === 'abs' && axid !== null) pass = m.target.op === '<' ? axid < m.target.value : axid <= m.target.value;
    return {
      scenario: label,
      metric: m.metric,
      unit: m.unit,
      axid: axid === null || Number.isNaN(axid) ? null : axid,
      floor: floor === null || Number.isNaN(floor) ? null : floor,
      ratio,
      target: targetText(m.target, m.unit),
      pass,
      axidRounds: m.axid,
      floorRounds: m.floor,
    };
  });
}

export const fmt = (x: number | null, unit = '') => {
  if (x === null || !Number.isFinite(x)) return '—';
  const a = Math.abs(x);
  const s = a >= 100 ? x.toFixed(0) : a >= 10 ? x.toFixed(1) : x.toFixed(2);
  return unit ? `${s} ${unit}` : s;
};

export function table(scenarios: Scenario[]): string {
  const header = ['scenario', 'metric', 'Axid (median)', 'floor (median)', 'ratio', 'target', 'result'];
  const lines: string[][] = [];
  for (const s of scenarios) {
    const rows = rowsOf(s);
    if (rows.length === 0) {
      lines.push([`${s.id} ${s.name}`, '—', s.status === 'skipped' ? 'skipped' : 'not available', '—', '—', '—', s.status === 'skipped' ? 'skipped' : 'n/a']);
      continue;
    }
    for (const r of rows) {
      const result = s.status === 'ran' ? (r.pass === null ? '' : r.pass ? 'PASS' : 'FAIL') : s.status === 'unavailable' ? 'n/a' : 'error';
      lines.push([
        r.scenario,
        `${r.metric} (${r.unit})`,
        r.axid === null ? (s.status === 'ran' ? '—' : 'not available') : fmt(r.axid),
        fmt(r.floor),
        r.ratio === null ? '—' : `${fmt(r.ratio)}x`,
        r.target,
        result,
      ]);
    }
  }
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...lines.map(line)].join('\n');
}

export function notes(scenarios: Scenario[]): string[] {
  const out: string[] = [];
  for (const s of scenarios) {
    if (s.status === 'unavailable') out.push(`${s.id} ${s.name}: not available: ${s.reason}`);
    if (s.status === 'failed') out.push(`${s.id} ${s.name}: failed: ${s.reason}`);
    if (s.status === 'skipped') out.push(`${s.id} ${s.name}: skipped: ${s.reason}`);
    for (const n of s.notes) out.push(`${s.id} ${s.name}: ${n}`);
  }
  return out;
}
