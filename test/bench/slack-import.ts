// Scenario 10, moving in from Slack: `npm run import:slack` of a generated
// export (test/bench/slack-export-generator.ts: 1,000 channels, 5,000 users,
// threads, reactions, 1,000 files from a local folder) at each size of
// BENCH_SLACK_MESSAGES (default 100,000 and 1,000,000), timed, with the
// command's peak RSS (VmHWM, read from /proc while it runs), so two sizes
// show whether memory grows with the export. Targets: ≤ 5 minutes and
// ≤ 300 MB at 1,000,000 messages.
// In the full bench: `BENCH_ONLY=10 npm run bench`. Alone, against a database of
// its own: `npx tsx test/bench/slack-import.ts [messages...]`.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { generateSlackExport } from './slack-export-generator.js';
import { memoryOf, repoRoot } from './lib/proc.js';
import type { Scenario } from './lib/report.js';

export interface ImportRun {
  messages: number;
  seconds: number;
  peakRssMb: number;
  /** Messages in the database afterwards. */
  stored: number;
  load: number[];
  exportMb: number;
  generateSeconds: number;
}

const sizes = () => (process.env.BENCH_SLACK_MESSAGES ?? '100000,1000000').split(',').map(Number).filter((n) => n > 0);

/** Generates (once per size, kept under `workDir`) and imports one export; `env` points the command at the deployment. */
export async function importRun(env: Record<string, string>, workDir: string, messages: number, log: (m: string) => void): Promise<ImportRun> {
  const zip = path.join(workDir, `slack-${messages}.zip`);
  const files = path.join(workDir, `slack-${messages}-files`);
  let generateSeconds = 0;
  if (!existsSync(zip)) {
    const t = Date.now();
    await generateSlackExport(zip, { messages, channels: 1000, users: 5000, files: 1000, filesDir: files });
    generateSeconds = (Date.now() - t) / 1000;
    log(`generated ${messages} messages in ${generateSeconds.toFixed(1)} s`);
  }
  const exportMb = (await import('node:fs')).statSync(zip).size / 1024 / 1024;
  const started = Date.now();
  // As `npm run import:slack` runs it (package.json: the heap it may keep, IMPORT_HEAP_MB), without npm in between so that its pid is the importer's.
  const heap = `--max-old-space-size=${process.env.IMPORT_HEAP_MB ?? 192}`;
  const child = spawn(process.execPath, [heap, '--import', 'tsx', 'services/import-slack.ts', zip, '--files-from', files], {
    cwd: repoRoot,
    env: { ...process.env, ...env, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out = (out + d).slice(-20_000)));
  let peakKb = 0;
  const sample = setInterval(() => {
    try {
      const { hwmKb } = memoryOf(child.pid!);
      // An exited (zombie) process has no VmHWM line.
      if (Number.isFinite(hwmKb)) peakKb = Math.max(peakKb, hwmKb);
    } catch {
      /* gone */
    }
  }, 100);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearInterval(sample);
  const seconds = (Date.now() - started) / 1000;
  if (code !== 0) throw new Error(`import:slack exited ${code}: ${out.slice(-2000)}`);
  const db = new pg.Client({ connectionString: env.DATABASE_URL });
  await db.connect();
  const stored = Number((await db.query('SELECT count(*) AS n FROM messages').then((r) => r.rows[0])).n);
  await db.end();
  return { messages, seconds, peakRssMb: peakKb / 1024, stored, load: os.loadavg(), exportMb, generateSeconds };
}

/** The bench harness's scenario: each size into the bench's own database (run.ts, BENCH_ONLY=10). */
export async function slackImport(b: { axidEnv: Record<string, string>; dataDir: string; log(m: string): void }, s: Scenario): Promise<void> {
  const work = mkdtempSync(path.join(b.dataDir, 'slack-'));
  for (const n of sizes()) {
    const r = await importRun(b.axidEnv, work, n, b.log);
    const atTarget = n >= 1_000_000;
    s.metrics.push({ metric: `${n.toLocaleString('en')} messages: time`, unit: 's', axid: [r.seconds], floor: [], ...(atTarget ? { target: { kind: 'abs', op: '<=', value: 300 } } : {}) });
    s.metrics.push({ metric: `${n.toLocaleString('en')} messages: peak RSS`, unit: 'MB', axid: [r.peakRssMb], floor: [], target: { kind: 'abs', op: '<=', value: 300 } });
    s.notes.push(`${n} messages: ${r.seconds.toFixed(1)} s, peak RSS ${r.peakRssMb.toFixed(0)} MB, load average ${r.load.map((x) => x.toFixed(2)).join(' ')}`);
  }
  rmSync(work, { recursive: true, force: true });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const wanted = process.argv.slice(2).map(Number).filter((n) => n > 0);
  const id = `${Date.now().toString(36)}`;
  const name = `axid_bench_slack_${id}`;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'axid-bench-slack-'));
  const env = {
    DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${name}`,
    REDIS_KEY_PREFIX: `axidbenchslack:${id}:`,
    DATA_DIR: dataDir,
    BOOTSTRAP_ADMIN_KEY: `bench_${'k'.repeat(40)}`,
  };
  const log = (m: string) => process.stderr.write(`[slack bench] ${m}\n`);
  const admin = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
  await admin.connect();
  try {
    for (const n of wanted.length ? wanted : sizes()) {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await new Promise<void>((resolve, reject) => {
        const m = spawn(process.execPath, ['--import', 'tsx', 'services/migrate.ts'], { cwd: repoRoot, env: { ...process.env, ...env, LOG_LEVEL: 'warn' }, stdio: 'ignore' });
        m.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`migrate exited ${code}`))));
      });
      const r = await importRun(env, process.env.BENCH_SLACK_DIR ?? dataDir, n, log);
      process.stdout.write(`${JSON.stringify(r)}\n`);
    }
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
