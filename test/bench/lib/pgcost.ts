// What a run cost PostgreSQL, counted for the bench's own database alone (the
// server is shared with whatever else the machine runs):
// - CPU: utime + stime of the backends connected to the bench database
//   (pg_stat_activity, /proc/<pid>/stat), the relay's connection included;
// - WAL: the bytes of the WAL records that touch a relation of the bench
//   database, plus the commit records of their transactions, read with
//   pg_waldump between the run's two WAL positions (needs read access to the
//   server's data directory: the bench's machine runs it locally).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type pg from 'pg';
import { cpuMsOf } from './proc.js';

const run = promisify(execFile);

export interface PgMark {
  lsn: string;
  cpu: Map<number, number>;
}

async function backendCpu(db: pg.Client): Promise<Map<number, number>> {
  const { rows } = await db.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
  const cpu = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      cpu.set(pid, cpuMsOf(pid));
    } catch {
      /* ended meanwhile */
    }
  }
  return cpu;
}

export async function pgMark(db: pg.Client): Promise<PgMark> {
  const { rows } = await db.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
  return { lsn: rows[0]!.lsn, cpu: await backendCpu(db) };
}

let walTool: { bin: string; dir: string; dbOid: number } | null | undefined;

async function findWalTool(db: pg.Client) {
  if (walTool !== undefined) return walTool;
  walTool = null;
  try {
    const dir = (await db.query<{ d: string }>('SELECT current_setting($1) AS d', ['data_directory'])).rows[0]!.d;
    const version = (await db.query<{ v: string }>('SELECT current_setting($1) AS v', ['server_version_num'])).rows[0]!.v;
    const bin = [`/usr/lib/postgresql/${Math.floor(Number(version) / 10000)}/bin/pg_waldump`, '/usr/bin/pg_waldump'].find(existsSync);
    const dbOid = (await db.query<{ oid: number }>('SELECT oid FROM pg_database WHERE datname = current_database()')).rows[0]!.oid;
    if (bin && existsSync(path.join(dir, 'pg_wal'))) walTool = { bin, dir: path.join(dir, 'pg_wal'), dbOid };
  } catch {
    /* not readable: WAL is not reported */
  }
  return walTool;
}

/** WAL bytes of the bench database between two positions; null when pg_waldump cannot read the WAL here. */
async function walBytes(db: pg.Client, from: string, to: string): Promise<number | null> {
  const tool = await findWalTool(db);
  if (!tool) return null;
  let out: string;
  try {
    out = (await run(tool.bin, ['-p', tool.dir, '-s', from, '-e', to], { maxBuffer: 1 << 30 })).stdout;
  } catch (err) {
    // pg_waldump exits non-zero at the end of the written WAL; what it printed still counts.
    out = (err as { stdout?: string }).stdout ?? '';
    if (!out) return null;
  }
  const ours = new Set<string>();
  const commits = new Map<string, number>();
  let bytes = 0;
  const rel = new RegExp(`rel \\d+/${tool.dbOid}/`);
  for (const line of out.split('\n')) {
    const m = /len \(rec\/tot\):\s*\d+\/\s*(\d+), tx:\s*(\d+)/.exec(line);
    if (!m) continue;
    const [, tot, tx] = m;
    if (rel.test(line)) {
      bytes += Number(tot);
      if (tx !== '0') ours.add(tx!);
    } else if (line.includes('desc: COMMIT')) commits.set(tx!, Number(tot));
  }
  for (const [tx, n] of commits) if (ours.has(tx)) bytes += n;
  return bytes;
}

/** CPU (ms) of the bench database's backends and WAL (bytes) since the mark. */
export async function pgCost(db: pg.Client, mark: PgMark): Promise<{ cpuMs: number; walBytes: number | null }> {
  const lsn = (await db.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]!.lsn;
  const after = await backendCpu(db);
  let cpuMs = 0;
  for (const [pid, ms] of after) cpuMs += ms - (mark.cpu.get(pid) ?? 0);
  return { cpuMs, walBytes: await walBytes(db, mark.lsn, lsn) };
}
