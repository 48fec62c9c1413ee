// The stores alone, PostgreSQL and S3, for the stack and for the operator's
// commands that need no role (`npm run retention`, `backup`, `restore`):
// found the way `npm start` finds them (shared/embedded.ts), one S3 client
// made one way.
import { CreateBucketCommand, HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
import type { Knex } from 'knex';
import type { Config } from '../shared/config.js';
import { createDb } from '../shared/db/knex.js';
import { resolveDataStores, type Dependencies } from '../shared/embedded.js';
import type { Logger } from '../shared/logger.js';

export function createS3Client(config: Config, endpoint: string): S3Client {
  // On Node 20 the AWS SDK prints a multi-line notice that its releases after
  // January 2027 need Node 22 (docs/decisions.md, "Node versions"); the SDK's
  // documented switch turns it off so that the log stays one JSON object a line.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  return new S3Client({
    endpoint,
    region: config.s3.region,
    forcePathStyle: config.s3.forcePathStyle,
    credentials: { accessKeyId: config.s3.accessKeyId, secretAccessKey: config.s3.secretAccessKey },
  });
}

/** Creates the bucket unless it is there. */
export async function ensureBucket(s3: S3Client, bucket: string) {
  try {
    await s3.send(new HeadBucketCommand({ Bucket: bucket }));
  } catch {
    await s3.send(new CreateBucketCommand({ Bucket: bucket })).catch((err: { name?: string }) => {
      if (err.name !== 'BucketAlreadyOwnedByYou' && err.name !== 'BucketAlreadyExists') throw err;
    });
  }
}

export interface Stores {
  db: Knex;
  s3: S3Client;
  deps: Omit<Dependencies, 'redisUrl'>;
  close(): Promise<void>;
}

/** The configured database (unbounded statements: these commands run long on purpose) and bucket's client. */
export async function openStores(config: Config, log: Logger): Promise<Stores> {
  const deps = await resolveDataStores(config, log);
  const db = createDb(deps.databaseUrl, 2, log);
  const s3 = createS3Client(config, deps.s3Endpoint);
  return {
    db,
    s3,
    deps,
    async close() {
      s3.destroy();
      await db.destroy();
      await deps.stop();
    },
  };
}
