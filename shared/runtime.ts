import type { Knex } from 'knex';
import type { S3Client } from '@aws-sdk/client-s3';
import type { AccessCache } from './access-cache.js';
import type { Config } from './config.js';
import type { ReadRouting } from './db/read-replicas.js';
import type { BusKeys } from './event-bus.js';
import type { CommitListeners } from './events.js';
import type { JobWakeups } from './job-wakeups.js';
import type { Logger } from './logger.js';
import type { Metrics } from './metrics.js';
import type { OutboundFetcher } from './http/outbound-fetch.js';
import type { Redis } from './redis.js';

/** What every role is handed at start: connections, settings, instruments. */
export interface Runtime {
  config: Config;
  log: Logger;
  /** The primary: writes, and reads that decide a write. */
  db: Knex;
  /** Reads a replica may answer: `rt.reads.read(actor, (db) => ...)` (shared/db/read-replicas.ts). */
  reads: ReadRouting;
  /** Commands (rate limits, ephemeral events, queues). Never used for blocking reads. */
  redis: Redis;
  /** The event bus's shards (shared/event-bus.ts). */
  bus: BusKeys;
  metrics: Metrics;
  s3: S3Client;
  /** Cached key → caller and channel access, dropped by the events that change them. */
  access: AccessCache;
  /** Listeners for the events this runtime commits (services/stack.ts: the relay and the access cache). */
  events: CommitListeners;
  /** Wakes the job publisher after commits that recorded jobs (shared/job-outbox.ts). */
  jobs: JobWakeups;
  /** The one way to request an address a user gave (shared/http/outbound-fetch.ts). */
  outbound: OutboundFetcher;
  /** Resolves true when Postgres and Redis answer. */
  ready(): Promise<boolean>;
}
