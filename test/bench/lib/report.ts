// Scenario results → one table (stdout and RESULTS.md) and JSON.
import { median } from './stats.js';

export type Target = { kind: 'ratio'; op: '>=' | '<=' | '<'; value: number } | { kind: 'abs'; op: '<' | '<='; value: number; aim?: boolean };

export interface Metric {
  metric: string;
  unit: string;
  axid: number[];
  floor: number[];
  /** Target against the floor (ratio) or on Axid alone (abs). */
  target?: Target;
  /** The same measure of nginx + Nchan in the same rounds (scenarios 3 and 5), when it is installed. */
  nchan?: number[];
  nchanTarget?: Extract<Target, { kind: 'ratio' }>;
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
  nchan: number | null;
  /** Median of the per-round ratios Axid ÷ Nchan. */
  nchanRatio: number | null;
  target: string;
  pass: boolean | null;
  axidRounds: number[];
  floorRounds: number[];
  nchanRounds: number[];
}

const targetText = (t: Target | undefined, unit: string) =>
  !t ? '' : t.kind === 'ratio' ? `${t.op === '>=' ? '≥' : t.op === '<' ? '<' : '≤'} ${t.value}x` : `${t.aim ? 'aim ' : ''}${t.op === '<' ? '<' : '≤'} ${t.value} ${unit}`;

const medianOrNull = (xs: number[] | undefined) => {
  const m = xs?.length ? median(xs) : NaN;
  return Number.isNaN(m) ? null : m;
};

/** The median of the per-round ratios: each round's pair ran back to back. */
function ratioOf(axid: number[], other: number[] | undefined): number | null {
  const pairs = axid.map((a, i) => a / (other?.[i] ?? NaN)).filter((x) => Number.isFinite(x));
  return pairs.length ? median(pairs) : null;
}

const meets = (t: Target, x: number) => (t.op === '>=' ? x >= t.value : t.op === '<' ? x < t.value : x <= t.value);

export function rowsOf(s: Scenario): Row[] {
  const label = `${s.id} ${s.name}`;
  return s.metrics.map((m) => {
    const axid = medianOrNull(m.axid);
    const ratio = ratioOf(m.axid, m.floor);
    const nchanRatio = ratioOf(m.axid, m.nchan);
    // Every target that could be judged must hold; a missing peer (no Nchan installed) is not judged.
    const verdicts: boolean[] = [];
    if (m.target?.kind === 'ratio' && ratio !== null) verdicts.push(meets(m.target, ratio));
    if (m.target?.kind === 'abs' && axid !== null) verdicts.push(meets(m.target, axid));
    if (m.nchanTarget && nchanRatio !== null) verdicts.push(meets(m.nchanTarget, nchanRatio));
    const targets = [targetText(m.target, m.unit), m.nchanTarget ? `${targetText(m.nchanTarget, m.unit)} Nchan` : ''].filter(Boolean);
    return {
      scenario: label,
      metric: m.metric,
      unit: m.unit,
      axid,
      floor: medianOrNull(m.floor),
      ratio,
      nchan: medianOrNull(m.nchan),
      nchanRatio,
      target: targets.join('; '),
      pass: verdicts.length ? verdicts.every(Boolean) : null,
      axidRounds: m.axid,
      floorRounds: m.floor,
      nchanRounds: m.nchan ?? [],
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
  const header = ['scenario', 'metric', 'Axid (median)', 'floor (median)', 'ratio', 'Nchan (median)', 'ratio to Nchan', 'target', 'result'];
  const lines: string[][] = [];
  for (const s of scenarios) {
    const rows = rowsOf(s);
    if (rows.length === 0) {
      lines.push([`${s.id} ${s.name}`, '—', s.status === 'skipped' ? 'skipped' : 'not available', '—', '—', '—', '—', '—', s.status === 'skipped' ? 'skipped' : 'n/a']);
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
        fmt(r.nchan),
        r.nchanRatio === null ? '—' : `${fmt(r.nchanRatio)}x`,
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
