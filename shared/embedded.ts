// Embedded stand-ins: what `npm start` (EMBEDDED=auto, shared/config.ts) uses
// on a machine that has no Postgres, Redis or S3 configured. With EMBEDDED=off
// (infra/Dockerfile, infra/docker-compose.yml, k8s/base) a store that is
// missing stops the start with a message naming its variable instead, so a pod
// without S3_ENDPOINT never keeps uploads on its own disk. Each choice is logged once.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import type { Config } from './config.js';
import type { Logger } from './logger.js';
import { clusterNodesOf } from './redis.js';

export interface Dependencies {
  databaseUrl: string;
  /** True when the database is the single-connection embedded PGlite. */
  embeddedDatabase: boolean;
  redisUrl: string;
  s3Endpoint: string;
  stop(): Promise<void>;
}

export function canConnect(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Where the default PostgreSQL is looked for; tests point it at a closed port. */
export interface Probes {
  postgres?: { host: string; port: number };
  /** Replaces the default Redis URL that is tried before starting redis-server. */
  redisUrl?: string;
}

export async function resolveDependencies(config: Config, log: Logger, probes: Probes = {}): Promise<Dependencies> {
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch(() => undefined);
  };
  try {
    const db = await resolveDatabase(config, log, stops, probes.postgres ?? { host: '127.0.0.1', port: 5432 });
    const redisUrl = await resolveRedis(config, log, stops, probes.redisUrl ?? config.redisUrl);
    const s3Endpoint = await resolveS3(config, log, stops);
    return { ...db, redisUrl, s3Endpoint, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * The database and the bucket alone, found as resolveDependencies finds them:
 * the operator's commands (retention, backup, restore) need no Redis.
 */
export async function resolveDataStores(config: Config, log: Logger): Promise<Omit<Dependencies, 'redisUrl'>> {
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch(() => undefined);
  };
  try {
    const db = await resolveDatabase(config, log, stops, { host: '127.0.0.1', port: 5432 });
    const s3Endpoint = await resolveS3(config, log, stops);
    return { ...db, s3Endpoint, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** A store that EMBEDDED=off requires and that is not there. */
export class MissingDependencyError extends Error {}

async function resolveDatabase(config: Config, log: Logger, stops: (() => Promise<void>)[], probe: { host: string; port: number }) {
  if (config.embedded === 'off') {
    const u = new URL(config.databaseUrl);
    const at = config.databaseUrlIsDefault ? probe : { host: u.hostname, port: Number(u.port || 5432) };
    if (!(await canConnect(at.host, at.port, 3_000))) {
      throw new MissingDependencyError(
        `PostgreSQL does not answer at ${at.host}:${at.port} (DATABASE_URL ${config.databaseUrlIsDefault ? 'is not set' : `is ${redact(config.databaseUrl)}`}) and EMBEDDED=off: set DATABASE_URL to a reachable database`,
      );
    }
  }
  if (config.embedded === 'off' || !config.databaseUrlIsDefault || (await canConnect(probe.host, probe.port))) {
    log.info({ database: redact(config.databaseUrl) }, 'using PostgreSQL');
    return { databaseUrl: config.databaseUrl, embeddedDatabase: false };
  }
  const dir = path.resolve(config.dataDir, 'pg');
  mkdirSync(dir, { recursive: true });
  const { PGlite } = await import('@electric-sql/pglite');
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
  const pglite = await PGlite.create(dir);
  const port = await freePort();
  const server = new PGLiteSocketServer({ db: pglite, host: '127.0.0.1', port, maxConnections: 8 });
  await server.start();
  stops.push(async () => {
    await server.stop();
    await pglite.close();
  });
  log.info({ dir }, 'nothing listens on 127.0.0.1:5432 and DATABASE_URL is unset: using embedded PostgreSQL (PGlite)');
  return { databaseUrl: `postgres://postgres@127.0.0.1:${port}/postgres`, embeddedDatabase: true };
}

async function redisAnswers(url: string, timeoutMs?: number): Promise<boolean> {
  // A cluster answers when one of its seed nodes does (the client finds the rest).
  const nodes = clusterNodesOf(url);
  if (nodes) return (await Promise.all(nodes.map((n) => canConnect(n.host, n.port, timeoutMs)))).some(Boolean);
  const u = new URL(url);
  return canConnect(u.hostname, Number(u.port || 6379), timeoutMs);
}

async function resolveRedis(config: Config, log: Logger, stops: (() => Promise<void>)[], probeUrl: string) {
  if (config.embedded === 'off') {
    const url = config.redisUrlIsDefault ? probeUrl : config.redisUrl;
    if (!(await redisAnswers(url, 3_000))) {
      throw new MissingDependencyError(
        `Redis does not answer at ${redact(url)} (REDIS_URL ${config.redisUrlIsDefault ? 'is not set' : 'is set'}) and EMBEDDED=off: set REDIS_URL to a reachable Redis`,
      );
    }
    log.info({ redis: redact(url) }, 'using Redis');
    return url;
  }
  if (!config.redisUrlIsDefault || (await redisAnswers(probeUrl))) {
    log.info({ redis: redact(config.redisUrl) }, 'using Redis');
    return config.redisUrl;
  }
  const found = spawnSync('redis-server', ['--version'], { stdio: 'ignore' });
  if (found.error || found.status !== 0) {
    throw new Error(
      'Redis does not answer at redis://127.0.0.1:6379 and redis-server is not on PATH. ' +
        'Install Redis (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis) or set REDIS_URL.',
    );
  }
  const dir = path.resolve(config.dataDir, 'redis');
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '60 1', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  stops.push(async () => {
    // It saves its data on the way out (a restart must not race it). It stays
    // running if that save fails (folder gone, disk full): SIGKILL then.
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 3_000);
    await exited;
    clearTimeout(killer);
  });
  for (let i = 0; i < 50 && !(await canConnect('127.0.0.1', port)); i++) await new Promise((r) => setTimeout(r, 100));
  log.info({ dir, port }, 'Redis does not answer and REDIS_URL is unset: started redis-server from PATH');
  return `redis://127.0.0.1:${port}`;
}

async function resolveS3(config: Config, log: Logger, stops: (() => Promise<void>)[]) {
  if (config.s3.endpoint) {
    log.info({ endpoint: config.s3.endpoint, bucket: config.s3.bucket }, 'using S3-compatible storage');
    return config.s3.endpoint;
  }
  if (config.embedded === 'off') {
    throw new MissingDependencyError('S3_ENDPOINT is not set and EMBEDDED=off: set S3_ENDPOINT, S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY (uploads would otherwise stay on this machine\'s disk)');
  }
  const dir = path.resolve(config.dataDir, 's3');
  mkdirSync(dir, { recursive: true });
  const { default: S3rver } = await import('s3rver');
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: dir,
    configureBuckets: [{ name: config.s3.bucket }],
  });
  // Nothing is in flight before the server starts: parts left by a process
  // that died mid-upload go now (what a lifecycle rule does on real S3).
  rmSync(multipartDir(dir, config.s3.bucket), { recursive: true, force: true });
  server.middleware.unshift(abortMultipartUpload(dir));
  keepFoldersOnDelete(server);
  const address = (await server.run()) as { address: string; port: number };
  stops.push(async () => {
    await server.close();
  });
  const endpoint = `http://127.0.0.1:${address.port}`;
  log.info({ dir, endpoint }, 'S3_ENDPOINT is unset: using the embedded S3-compatible server');
  return endpoint;
}

interface S3rverStore {
  getResourcePath(bucket: string, key: string, resource: string): string;
  deleteObject(bucket: string, key: string): Promise<void>;
}

/**
 * s3rver 3's DeleteObject also removes the folders the deletion emptied
 * (`files/<workspace>/`); an upload into that folder at the same moment then
 * opens its file in a folder just removed, an error s3rver leaves unhandled,
 * which ends the whole process. Deleting a file while another is uploaded to
 * its workspace is ordinary (DELETE /files/{id}): the object's own files go,
 * empty folders stay.
 */
function keepFoldersOnDelete(server: object) {
  const store = (server as { store: S3rverStore }).store;
  store.deleteObject = async (bucket, key) => {
    await Promise.all(['object', 'object.md5', 'metadata.json'].map((resource) => rm(store.getResourcePath(bucket, key, resource), { force: true })));
  };
}

/** Where s3rver 3 keeps the parts of unfinished multipart uploads, one folder per upload id. */
export const multipartDir = (s3Dir: string, bucket: string) => path.join(s3Dir, bucket, '._S3rver_uploads');

const UPLOAD_ID = /^[0-9a-f]{32}$/; // s3rver's ids: 16 random bytes in hex

/**
 * AbortMultipartUpload (`DELETE /bucket/key?uploadId=…`), which s3rver lacks
 * (it answers 405 and keeps the parts): removes the upload's parts.
 */
function abortMultipartUpload(s3Dir: string) {
  return async (ctx: { method: string; path: string; query: Record<string, unknown>; status: number; body: unknown }, next: () => Promise<void>) => {
    const uploadId = ctx.query.uploadId;
    if (ctx.method !== 'DELETE' || typeof uploadId !== 'string') return next();
    const bucket = ctx.path.split('/')[1] ?? '';
    if (!UPLOAD_ID.test(uploadId) || !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) return next();
    rmSync(path.join(multipartDir(s3Dir, bucket), uploadId), { recursive: true, force: true });
    ctx.status = 204;
    ctx.body = null;
  };
}

const redact = (url: string) => url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');
