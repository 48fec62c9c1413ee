// `npm run backup -- <dir>`: a consistent copy of the deployment's data
// (docs/operations.md, "Backup and restore"): the database by pg_dump (custom
// format), taken in one exported snapshot; every stored object a file row of
// that snapshot names (objects never change once written, and a file's row is
// committed after its object, so the snapshot's rows find theirs); and a
// manifest with row counts and SHA-256 checksums, written last (a folder
// without one is not a backup). Axid keeps running meanwhile.
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import { createWriteStream, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { loadConfig } from '../shared/config.js';
import { createLogger } from '../shared/logger.js';
import {
  DATABASE_DUMP,
  FORMAT,
  MANIFEST,
  OBJECTS_DIR,
  countRows,
  pgTool,
  runTool,
  serverVersion,
  sha256OfFile,
  toolConnection,
  type Manifest,
  type ManifestObject,
} from './backup-format.js';
import { openStores } from './stores.js';

const OBJECT_COPIES_AT_ONCE = 8;

const arg = process.argv[2];
if (!arg) {
  process.stderr.write('usage: npm run backup -- <dir>  (a new or empty folder)\n');
  process.exit(2);
}
const dir = path.resolve(arg);
mkdirSync(dir, { recursive: true });
if (readdirSync(dir).length > 0) {
  process.stderr.write(`${dir} is not empty: give a new or empty folder\n`);
  process.exit(1);
}

const config = loadConfig();
const log = createLogger(config.logLevel);
const stores = await openStores(config, log);
try {
  if (stores.deps.embeddedDatabase) throw new Error('the embedded PGlite database cannot be dumped by pg_dump: back up a PostgreSQL server (DATABASE_URL)');
  const server = await serverVersion(stores.db);
  const pgDump = pgTool('pg_dump', server.major);
  const connection = toolConnection(stores.deps.databaseUrl);
  const dumpFile = path.join(dir, DATABASE_DUMP);

  // pg_dump reads the snapshot this transaction exports, which stays open until it is done.
  const snapshot = await stores.db.transaction(async (trx) => {
    await trx.raw('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    const exported: string = (await trx.raw('SELECT pg_export_snapshot() AS s')).rows[0].s;
    const counts = await countRows(trx);
    const migrations: string[] = await trx('knex_migrations').orderBy('id').pluck('name');
    const files: { storage_key: string; thumbnail_key: string | null }[] = await trx('files').select('storage_key', 'thumbnail_key');
    await runTool(pgDump.path, ['--format=custom', `--snapshot=${exported}`, `--file=${dumpFile}`, `--dbname=${connection.dbname}`], connection.env);
    return { counts, migrations, keys: [...new Set(files.flatMap((f) => (f.thumbnail_key ? [f.storage_key, f.thumbnail_key] : [f.storage_key])))] };
  });
  log.info({ counts: snapshot.counts, objects: snapshot.keys.length }, 'backup: database dumped');

  const objects: ManifestObject[] = [];
  const missing: string[] = [];
  const copy = async (key: string) => {
    const target = path.join(dir, OBJECTS_DIR, key);
    if (!target.startsWith(path.join(dir, OBJECTS_DIR) + path.sep)) throw new Error(`object key ${JSON.stringify(key)} leaves the backup folder`);
    mkdirSync(path.dirname(target), { recursive: true });
    try {
      const res = await stores.s3.send(new GetObjectCommand({ Bucket: config.s3.bucket, Key: key }));
      const hash = createHash('sha256');
      let bytes = 0;
      const body = res.Body as Readable;
      body.on('data', (chunk: Buffer) => {
        hash.update(chunk);
        bytes += chunk.length;
      });
      await pipeline(body, createWriteStream(target));
      objects.push({ key, bytes, sha256: hash.digest('hex'), content_type: res.ContentType ?? null });
    } catch (err) {
      if ((err as { name?: string }).name !== 'NoSuchKey') throw err;
      missing.push(key);
    }
  };
  const queue = [...snapshot.keys];
  await Promise.all(
    Array.from({ length: OBJECT_COPIES_AT_ONCE }, async () => {
      for (let key = queue.shift(); key !== undefined; key = queue.shift()) await copy(key);
    }),
  );
  if (missing.length) log.warn({ missing: missing.length }, 'backup: objects named by file rows were not in the bucket (listed in the manifest)');

  const manifest: Manifest = {
    format: FORMAT,
    created_at: new Date().toISOString(),
    server_version: server.version,
    pg_dump_version: pgDump.version,
    migrations: snapshot.migrations,
    database: { file: DATABASE_DUMP, ...(await sha256OfFile(dumpFile)) },
    counts: snapshot.counts,
    bucket: config.s3.bucket,
    objects: objects.sort((a, b) => a.key.localeCompare(b.key)),
    missing_objects: missing.sort(),
  };
  writeFileSync(path.join(dir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
  log.info({ dir, counts: manifest.counts, objects: objects.length, database_bytes: manifest.database.bytes }, 'backup written');
} catch (err) {
  log.error({ err: (err as Error).message }, 'backup failed');
  process.exitCode = 1;
} finally {
  await stores.close();
}
