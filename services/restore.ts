// `npm run restore -- <dir>`: a backup of `npm run backup` into an empty
// database (DATABASE_URL, created if missing) and an empty bucket (S3_BUCKET,
// created if missing); anything in either and it refuses, changing nothing
// (docs/operations.md, "Backup and restore"). Checksums are checked before
// anything is written, the dump is restored in one transaction, and the row
// counts are compared with the manifest's at the end. Axid is started on the
// restored stores afterwards (its migrations then bring an older backup up).
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { createReadStream, readFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../shared/config.js';
import { ensureDatabase } from '../shared/db/knex.js';
import { createLogger } from '../shared/logger.js';
import { FORMAT, MANIFEST, OBJECTS_DIR, countRows, pgTool, runTool, serverVersion, sha256OfFile, toolConnection, type Manifest } from './backup-format.js';
import { ensureBucket, openStores } from './stores.js';

const OBJECT_COPIES_AT_ONCE = 8;

class Refused extends Error {}

const arg = process.argv[2];
if (!arg) {
  process.stderr.write('usage: npm run restore -- <dir>  (a folder written by npm run backup)\n');
  process.exit(2);
}
const dir = path.resolve(arg);
const config = loadConfig();
const log = createLogger(config.logLevel);

let manifest: Manifest;
try {
  manifest = JSON.parse(readFileSync(path.join(dir, MANIFEST), 'utf8')) as Manifest;
  if (manifest.format !== FORMAT) throw new Error(`format ${JSON.stringify(manifest.format)}, expected ${FORMAT}`);
} catch (err) {
  log.error({ dir, err: (err as Error).message }, 'restore refused: no readable backup manifest in the folder');
  process.exit(1);
}

const objectFile = (key: string) => {
  const file = path.join(dir, OBJECTS_DIR, key);
  if (!file.startsWith(path.join(dir, OBJECTS_DIR) + path.sep)) throw new Refused(`object key ${JSON.stringify(key)} leaves the backup folder`);
  return file;
};

await ensureDatabase(config.databaseUrl);
const stores = await openStores(config, log);
try {
  if (stores.deps.embeddedDatabase) throw new Refused('restore goes into a PostgreSQL server (DATABASE_URL), not the embedded PGlite');
  // Everything checked before anything is written.
  const dump = path.join(dir, manifest.database.file);
  const dumpSum = await sha256OfFile(dump);
  if (dumpSum.sha256 !== manifest.database.sha256) throw new Refused(`${manifest.database.file} does not match its checksum in the manifest`);
  for (const o of manifest.objects) {
    if ((await sha256OfFile(objectFile(o.key))).sha256 !== o.sha256) throw new Refused(`object ${o.key} does not match its checksum in the manifest`);
  }
  const tables = Number((await stores.db.raw("SELECT count(*) AS n FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')")).rows[0].n);
  if (tables > 0) throw new Refused(`the database is not empty (${tables} tables): restore goes into an empty database`);
  await ensureBucket(stores.s3, config.s3.bucket);
  const listed = await stores.s3.send(new ListObjectsV2Command({ Bucket: config.s3.bucket, MaxKeys: 1 }));
  if ((listed.KeyCount ?? 0) > 0) throw new Refused(`the bucket ${config.s3.bucket} is not empty: restore goes into an empty bucket`);

  const server = await serverVersion(stores.db);
  const pgRestore = pgTool('pg_restore', server.major);
  const connection = toolConnection(stores.deps.databaseUrl);
  await runTool(pgRestore.path, ['--exit-on-error', '--single-transaction', '--no-owner', `--dbname=${connection.dbname}`, dump], connection.env);
  log.info({ counts: manifest.counts }, 'restore: database restored');

  const queue = [...manifest.objects];
  await Promise.all(
    Array.from({ length: OBJECT_COPIES_AT_ONCE }, async () => {
      for (let o = queue.shift(); o !== undefined; o = queue.shift()) {
        // Upload, as an upload's own path does (files.upload.ts): parts of known length, any size.
        await new Upload({
          client: stores.s3,
          params: { Bucket: config.s3.bucket, Key: o.key, Body: createReadStream(objectFile(o.key)), ContentType: o.content_type ?? undefined },
          leavePartsOnError: false,
        }).done();
      }
    }),
  );

  const counts = await countRows(stores.db);
  const differ = Object.keys(manifest.counts).filter((t) => counts[t] !== manifest.counts[t]);
  if (differ.length) throw new Error(`restored row counts differ from the manifest's: ${differ.map((t) => `${t} ${counts[t]} != ${manifest.counts[t]}`).join(', ')}`);
  log.info({ counts, objects: manifest.objects.length, missing_objects: manifest.missing_objects.length }, 'restore done');
} catch (err) {
  log.error({ err: (err as Error).message }, err instanceof Refused ? 'restore refused: nothing was written' : 'restore failed');
  process.exitCode = 1;
} finally {
  await stores.close();
}
