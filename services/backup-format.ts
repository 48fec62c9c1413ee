// What `npm run backup` writes and `npm run restore` reads (docs/operations.md,
// "Backup and restore"), and the PostgreSQL client tools both run.
//
//   <dir>/manifest.json     this format: counts, checksums, versions
//   <dir>/database.dump     pg_dump's custom format, taken in one snapshot
//   <dir>/objects/<key>     every stored object a file row of that snapshot names
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import type { Knex } from 'knex';

export const MANIFEST = 'manifest.json';
export const DATABASE_DUMP = 'database.dump';
export const OBJECTS_DIR = 'objects';
export const FORMAT = 'axid-backup/1';

/** Tables whose row counts the manifest keeps, and a restore checks. */
export const COUNTED_TABLES = [
  'workspaces',
  'users',
  'api_keys',
  'channels',
  'channel_members',
  'messages',
  'threads',
  'reactions',
  'files',
  'incoming_webhooks',
  'audit_log',
] as const;

export interface ManifestObject {
  key: string;
  bytes: number;
  sha256: string;
  content_type: string | null;
}

export interface Manifest {
  format: typeof FORMAT;
  created_at: string;
  server_version: string;
  pg_dump_version: string;
  migrations: string[];
  database: { file: string; bytes: number; sha256: string };
  counts: Record<string, number>;
  bucket: string;
  objects: ManifestObject[];
  /** Objects a file row named that the bucket no longer had (deleted after the snapshot, or lost). */
  missing_objects: string[];
}

export async function sha256OfFile(file: string): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    bytes += chunk.length;
  }
  return { sha256: hash.digest('hex'), bytes };
}

export async function countRows(db: Knex | Knex.Transaction): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of COUNTED_TABLES) counts[table] = Number((await db(table).count<{ c: string }>('* as c').first())!.c);
  return counts;
}

/** The server's major version (15 for 15.20). */
export async function serverVersion(db: Knex): Promise<{ version: string; major: number }> {
  const { rows } = await db.raw("SELECT current_setting('server_version') AS v, current_setting('server_version_num')::int AS n");
  return { version: rows[0].v, major: Math.floor(rows[0].n / 10000) };
}

/**
 * A client tool (pg_dump, pg_restore) able to work with a server of `major`:
 * the one of that version where Debian and Ubuntu install it, else the one on
 * PATH if it is at least as new (pg_dump refuses newer servers).
 */
export function pgTool(name: 'pg_dump' | 'pg_restore', major: number): { path: string; version: string } {
  const candidates = [`/usr/lib/postgresql/${major}/bin/${name}`, name];
  for (const path of candidates) {
    if (path.startsWith('/') && !existsSync(path)) continue;
    const out = spawnSync(path, ['--version'], { encoding: 'utf8' });
    const found = /(\d+)(?:\.(\d+))?/.exec(out.stdout ?? '');
    if (out.status === 0 && found && Number(found[1]) >= major) return { path, version: out.stdout.trim() };
  }
  throw new Error(`${name} for PostgreSQL ${major} or later was not found: install the PostgreSQL ${major} client tools (Debian/Ubuntu: apt-get install postgresql-client-${major})`);
}

/** A libpq connection for the tools: the URL without its password, which goes in PGPASSWORD (never on a command line). */
export function toolConnection(databaseUrl: string): { dbname: string; env: NodeJS.ProcessEnv } {
  const url = new URL(databaseUrl);
  const password = decodeURIComponent(url.password);
  url.password = '';
  return { dbname: url.toString(), env: { ...process.env, ...(password ? { PGPASSWORD: password } : {}) } };
}

/** Runs a tool to its end; its stderr goes to ours; a failure throws naming the tool. */
export function runTool(path: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(path, args, { env, stdio: ['ignore', 'inherit', 'inherit'] });
    child.once('error', reject);
    child.once('exit', (code, signal) => (code === 0 ? resolve() : reject(new Error(`${path} failed (${signal ?? `exit ${code}`})`))));
  });
}
