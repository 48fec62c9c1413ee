// The one configuration loader. Every variable (README.md, "Configuration") is
// read here, validated at once, and every bad value is reported together. The
// `Config` type is what the schema outputs, so it is written once.
import ipaddr from 'ipaddr.js';
import proxyaddr from 'proxy-addr';
import { z } from 'zod';
import { DEFAULT_FEATURE_LEVEL, type FeatureLevel } from './feature-level.js';
import { clusterUrl } from './redis.js';

const ROLE_NAMES = ['api', 'gateway', 'worker'] as const;
export type Role = (typeof ROLE_NAMES)[number];

const commaList = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((s) =>
      s
        .split(',')
        .map((x) => x.trim().toLowerCase().replace(/\.$/, ''))
        .filter(Boolean),
    );

const boolFlag = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0'])
    .default(fallback ? 'true' : 'false')
    .transform((v) => v === 'true' || v === '1');

// Browsers send an origin serialized (lower-case host, default port left out):
// each entry is compared in that form, so `HTTP://App.example:443` would never match.
const originList = z
  .string()
  .default('')
  .transform((s, ctx) => {
    const origins: string[] = [];
    for (const entry of s.split(',').map((x) => x.trim()).filter(Boolean)) {
      let url: URL | null = null;
      try {
        url = new URL(entry);
      } catch {
        url = null;
      }
      if (!url || !/^https?:$/.test(url.protocol) || url.origin !== entry) {
        ctx.addIssue({ code: 'custom', message: `"${entry}" is not an origin: write scheme://host[:port] exactly as a browser sends it (lower case, no path, no trailing slash${url && /^https?:$/.test(url.protocol) ? `, here "${url.origin}"` : ''})` });
      } else {
        origins.push(url.origin);
      }
    }
    return [...new Set(origins)];
  });

// Addresses or CIDRs of the proxies whose X-Forwarded-For is believed (or
// proxy-addr's names loopback, linklocal, uniquelocal), or a hop count.
const trustedProxies = z
  .string()
  .default('')
  .transform((s, ctx): TrustedProxies => {
    const text = s.trim();
    if (/^\d+$/.test(text)) return Number(text);
    const entries = text.split(',').map((x) => x.trim()).filter(Boolean);
    for (const entry of entries) {
      try {
        proxyaddr.compile(entry);
      } catch {
        ctx.addIssue({ code: 'custom', message: `"${entry}" is not an address, a CIDR (10.0.0.0/8), loopback, linklocal or uniquelocal; or give a hop count alone` });
      }
    }
    return entries;
  });

/** A list of addresses/CIDRs, or how many proxies in front (shared/http/client-address.ts). */
export type TrustedProxies = string[] | number;

// DNS servers the outbound fetcher asks (shared/http/outbound-fetch.ts):
// addresses, each with an optional port (`10.0.0.2`, `10.0.0.2:5353`, `[fd00::53]:53`).
const dnsServers = z
  .string()
  .default('')
  .transform((s, ctx) => {
    const servers: string[] = [];
    for (const entry of s.split(',').map((x) => x.trim()).filter(Boolean)) {
      const m = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(entry) ?? /^([^:]+)(?::(\d{1,5}))?$/.exec(entry) ?? (ipaddr.IPv6.isValid(entry) ? [entry, entry] : null);
      const port = m?.[2] === undefined ? 53 : Number(m[2]);
      if (!m || !ipaddr.isValid(m[1]!) || port < 1 || port > 65535) ctx.addIssue({ code: 'custom', message: `"${entry}" is not a DNS server: write an address, optionally with :port (IPv6 in brackets then)` });
      else servers.push(entry);
    }
    return servers;
  });

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

const EnvSchema = z.object({
  ROLES: z
    .string()
    .default('api,gateway,worker')
    .transform((s, ctx) => {
      const roles = s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean);
      for (const role of roles) {
        if (!(ROLE_NAMES as readonly string[]).includes(role)) {
          ctx.addIssue({ code: 'custom', message: `unknown role "${role}" (expected a comma list of ${ROLE_NAMES.join(', ')})` });
        }
      }
      if (roles.length === 0) ctx.addIssue({ code: 'custom', message: 'needs at least one role' });
      return [...new Set(roles)] as Role[];
    }),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('0.0.0.0'),
  PUBLIC_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL').optional(),
  // Streaming replicas for reads (shared/db/read-replicas.ts): a comma list of postgres:// URLs.
  DATABASE_READ_URL: z
    .string()
    .optional()
    .transform((v, ctx) => {
      const urls = (v ?? '').split(',').map((s) => s.trim()).filter(Boolean);
      for (const url of urls) {
        if (!/^postgres(ql)?:\/\//.test(url)) ctx.addIssue({ code: 'custom', message: 'must be a comma list of postgres:// URLs' });
      }
      return urls;
    }),
  DATABASE_READ_MAX_LAG_MS: positiveInt(5000),
  REDIS_URL: z.string().regex(/^rediss?:\/\//, 'must be a redis:// URL').optional(),
  // A Redis Cluster instead of one node: its seed nodes (docs/architecture.md, "Hash tags").
  REDIS_CLUSTER_NODES: z
    .string()
    .optional()
    .transform((s, ctx) => {
      if (s === undefined) return undefined;
      const nodes = s.split(',').map((x) => x.trim()).filter(Boolean);
      for (const node of nodes) if (!/^[A-Za-z0-9_.-]+:\d{1,5}$/.test(node)) ctx.addIssue({ code: 'custom', message: `"${node}" is not host:port` });
      if (nodes.length === 0) ctx.addIssue({ code: 'custom', message: 'needs at least one host:port' });
      return nodes;
    }),
  // Lets several stacks (or test runs) share one Redis.
  REDIS_KEY_PREFIX: z.string().regex(/^[A-Za-z0-9_:.-]{1,64}$/, 'must be 1 to 64 of A-Za-z0-9_:.-').default('axid:'),
  S3_ENDPOINT: z.url().optional(),
  S3_REGION: z.string().min(1).default('us-east-1'),
  S3_BUCKET: z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be a valid bucket name').default('axid-files'),
  S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  S3_FORCE_PATH_STYLE: boolFlag(true),
  DATA_DIR: z.string().min(1).default('./.data'),
  MIGRATE_ON_START: boolFlag(true),
  BOOTSTRAP_ADMIN_KEY: z
    .string()
    .regex(/^[A-Za-z0-9_-]{32,128}$/, 'must be 32 to 128 characters of A-Za-z0-9_-')
    .optional(),
  RATE_LIMIT_POINTS: positiveInt(1200),
  RATE_LIMIT_DURATION: positiveInt(60),
  // How long a file may stay `processing` (or a compatible post unrendered)
  // before the worker enqueues its job again.
  JOB_RECONCILE_AFTER: positiveInt(30),
  STREAM_MAX_PER_USER: positiveInt(50),
  // Bounds on a hung dependency (docs/reliability.md, "A hung dependency").
  DB_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(5_000),
  REDIS_COMMAND_TIMEOUT_MS: z.coerce.number().int().min(50).max(60_000).default(2_000),
  // The newest history pages kept in Redis (services/core/messages/page-cache.ts): seconds at most; 0 keeps none.
  PAGE_CACHE_SECONDS: z.coerce.number().int().min(0).max(3_600).default(60),
  // The event bus (docs/realtime.md): streams events are spread over, and how
  // long they are kept for replay (level 3).
  EVENT_SHARDS: z.coerce.number().int().min(1).max(64).default(1),
  STREAM_RETENTION_SECONDS: positiveInt(600),
  // Presence (level 3): a gateway's heartbeats expire after this long, so a
  // dead gateway's users go offline within it (plus a sweep, a third of it).
  PRESENCE_TTL_SECONDS: z.coerce.number().int().min(1).max(45).default(30),
  // Level 3: a streamed reply left without an append this many seconds is finished by the worker.
  STREAMING_TIMEOUT: positiveInt(600),
  // Level 3: the least lead a scheduled message or reminder may have, in seconds.
  // Test-only below 60 (the contract's minute), so tests need not wait one (test/processes).
  SCHEDULE_MIN_LEAD_SECONDS: z.coerce.number().int().min(1).max(60).default(60),
  // Days the audit log keeps an entry (contract §16); the retention job prunes older ones.
  AUDIT_RETENTION_DAYS: positiveInt(365),
  // Level 3: agent messages that may follow one another in a thread (or outside threads) with no person's message between.
  AGENT_CHAIN_LIMIT: positiveInt(25),
  // Test-only faults (test/processes): never set in a deployment.
  TEST_FAULT: z.enum(['crash-after-idempotent-commit']).optional(),
  TRACKER_HOSTS: commaList('linear.app'),
  CODE_HOSTS: commaList('github.com'),
  CORS_ORIGINS: originList,
  TRUSTED_PROXIES: trustedProxies,
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // auto (npm start): the embedded stand-ins of shared/embedded.ts take over
  // when nothing answers; off (image, compose, k8s): a missing store stops the start.
  EMBEDDED: z.enum(['auto', 'off']).default('auto'),
  // 2: the documented interface, byte for byte; 3: the capabilities of
  // docs/feature-levels.md (shared/feature-level.ts).
  // Single sign-on (level 3, contract §12; docs/sso.md): on when the three are set.
  OIDC_ISSUER: z.url({ protocol: /^https?$/ }).optional(),
  OIDC_CLIENT_ID: z.string().min(1).optional(),
  OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  // The name on the sign-in button; the issuer's host when unset.
  OIDC_NAME: z.string().min(1).max(80).optional(),
  // Whether a verified email the workspace does not know becomes a new member.
  OIDC_AUTO_CREATE: boolFlag(false),
  // scrypt's cost N (a power of two) for new password hashes (docs/security.md).
  PASSWORD_SCRYPT_N: z.coerce
    .number()
    .int()
    .refine((n) => n >= 1024 && n <= 2 ** 20 && (n & (n - 1)) === 0, 'must be a power of two from 1024 to 1048576')
    .default(2 ** 16),
  // Event subscriptions (level 3, docs/bots.md): true admits http:// and
  // private addresses (local development and tests only).
  EVENT_SUBSCRIPTION_ALLOW_PRIVATE: boolFlag(false),
  // How long one delivery attempt may take (contract §11: 10 s).
  EVENT_DELIVERY_TIMEOUT_MS: positiveInt(10_000),
  // Retries: the first waits RETRY_BASE_MS, each next one twice as long, at
  // most RETRY_MAX_MS; an event is given up, and a subscription failing
  // throughout disabled, after RETRY_WINDOW_SECONDS (24 h).
  EVENT_DELIVERY_RETRY_BASE_MS: positiveInt(1_000),
  EVENT_DELIVERY_RETRY_MAX_MS: positiveInt(3_600_000),
  EVENT_DELIVERY_RETRY_WINDOW_SECONDS: positiveInt(86_400),
  // Attempts one worker process runs at once, and one subscription across all workers.
  EVENT_DELIVERY_CONCURRENCY: positiveInt(32),
  EVENT_DELIVERY_PER_SUBSCRIPTION: positiveInt(4),
  // Attempts of one owner's subscriptions at once, across all workers: one
  // slow owner never takes every slot of EVENT_DELIVERY_CONCURRENCY.
  EVENT_DELIVERY_PER_OWNER: positiveInt(8),
  // A worker's unacknowledged stream entries are taken over by another after this long.
  EVENT_DELIVERY_CLAIM_IDLE_MS: positiveInt(15_000),
  // The outbound fetcher (shared/http/outbound-fetch.ts): the DNS servers it
  // asks (the system's when empty), and how many fetches one user may run at
  // once in a process.
  OUTBOUND_DNS_SERVERS: dnsServers,
  OUTBOUND_PER_OWNER: positiveInt(8),
  // Link previews (services/core/unfurls): local development and tests also fetch http:// and private addresses.
  UNFURL_ALLOW_PRIVATE: boolFlag(false),
  // Email (services/core/email, docs/email.md): nothing is sent without SMTP_URL.
  SMTP_URL: z.string().regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL').optional(),
  MAIL_FROM: z.string().min(3).optional(),
  // Seconds an unread mention or DM waits before it is emailed.
  EMAIL_NOTIFY_DELAY: positiveInt(600),
  FEATURE_LEVEL: z
    .enum(['2', '3'])
    .default(String(DEFAULT_FEATURE_LEVEL) as '2')
    .transform((v) => Number(v) as FeatureLevel),
});

// A real S3 store is never spoken to with the embedded server's credentials.
// `when` lets these run beside other bad values, so all are reported at once.
const S3_CREDENTIALS = ['S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'] as const;
const EnvWithCredentials = S3_CREDENTIALS.reduce(
  (schema, name) =>
    schema.refine((e) => e.S3_ENDPOINT === undefined || e[name] !== undefined, {
      path: [name],
      message: `is required when S3_ENDPOINT is set (set both ${S3_CREDENTIALS.join(' and ')})`,
      when: () => true,
    }),
  EnvSchema,
);

// Single sign-on needs its three settings together: one missing is a mistake, not "off".
const OIDC_SETTINGS = ['OIDC_ISSUER', 'OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET'] as const;
const EnvChecked = OIDC_SETTINGS.reduce(
  (schema, name) =>
    schema.refine((e) => OIDC_SETTINGS.every((n) => e[n] === undefined) || e[name] !== undefined, {
      path: [name],
      message: `is required when any of ${OIDC_SETTINGS.join(', ')} is set (set all three for single sign-on)`,
      when: () => true,
    }),
  EnvWithCredentials,
);

const ConfigSchema = EnvChecked.transform((e) => ({
  roles: e.ROLES,
  port: e.PORT,
  host: e.HOST,
  publicBaseUrl: (e.PUBLIC_BASE_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ''),
  databaseUrl: e.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/axid',
  /** True when DATABASE_URL was not set: the embedded PGlite fallback may be used. */
  databaseUrlIsDefault: e.DATABASE_URL === undefined,
  /** Read replicas; a replica lagging more than readMaxLagMs (or away) is skipped (shared/db/read-replicas.ts). */
  databaseReadUrls: e.DATABASE_READ_URL,
  readMaxLagMs: e.DATABASE_READ_MAX_LAG_MS,
  /** One node's URL, or with REDIS_CLUSTER_NODES a `redis-cluster://h:p,…` URL (shared/redis.ts createRedis). */
  redisUrl: e.REDIS_CLUSTER_NODES ? clusterUrl(e.REDIS_CLUSTER_NODES, e.REDIS_URL) : (e.REDIS_URL ?? 'redis://127.0.0.1:6379'),
  redisUrlIsDefault: e.REDIS_URL === undefined && e.REDIS_CLUSTER_NODES === undefined,
  /** Whether Redis is a cluster (REDIS_CLUSTER_NODES). */
  redisCluster: e.REDIS_CLUSTER_NODES !== undefined,
  redisKeyPrefix: e.REDIS_KEY_PREFIX,
  s3: {
    endpoint: e.S3_ENDPOINT,
    region: e.S3_REGION,
    bucket: e.S3_BUCKET,
    // Only the embedded server (no S3_ENDPOINT) is reached without credentials of our own.
    accessKeyId: e.S3_ACCESS_KEY_ID ?? 'S3RVER',
    secretAccessKey: e.S3_SECRET_ACCESS_KEY ?? 'S3RVER',
    forcePathStyle: e.S3_FORCE_PATH_STYLE,
  },
  dataDir: e.DATA_DIR,
  /** Migrate (and bootstrap an empty database) at start; off where a migration Job does it (k8s/base). */
  migrateOnStart: e.MIGRATE_ON_START,
  bootstrapAdminKey: e.BOOTSTRAP_ADMIN_KEY,
  rateLimit: { points: e.RATE_LIMIT_POINTS, duration: e.RATE_LIMIT_DURATION },
  /** Seconds after which unfinished work found in Postgres is enqueued again (services/worker/reconcile.ts). */
  jobReconcileAfter: e.JOB_RECONCILE_AFTER,
  /** Open event streams one user may hold on one gateway process (services/gateway/gateway.ts). */
  streamMaxPerUser: e.STREAM_MAX_PER_USER,
  /** PostgreSQL statement_timeout of the runtime's pool; lock, idle-in-transaction and client-side bounds follow from it (shared/db/knex.ts). */
  dbStatementTimeoutMs: e.DB_STATEMENT_TIMEOUT_MS,
  /** ioredis commandTimeout of the command connection (shared/redis.ts). */
  redisCommandTimeoutMs: e.REDIS_COMMAND_TIMEOUT_MS,
  /** Seconds a conversation's newest pages stay in Redis at most; 0: not kept (services/core/messages/page-cache.ts). */
  pageCacheSeconds: e.PAGE_CACHE_SECONDS,
  /** Streams the event bus spreads events over (shared/event-bus.ts); 1: one stream. */
  eventShards: e.EVENT_SHARDS,
  /** Seconds events stay in the bus for replay (trimmed by MINID at level 3). */
  streamRetentionSeconds: e.STREAM_RETENTION_SECONDS,
  /** Seconds a gateway's presence heartbeat lives (services/gateway/presence.ts). */
  presenceTtlSeconds: e.PRESENCE_TTL_SECONDS,
  /** Seconds after its last append a streamed reply is finished by the worker's sweep (level 3). */
  streamingTimeout: e.STREAMING_TIMEOUT,
  /** Least lead of a scheduled message or reminder, seconds (60; lower in tests only). */
  scheduleMinLeadSeconds: e.SCHEDULE_MIN_LEAD_SECONDS,
  /** Days an audit log entry is kept (services/core/retention). */
  auditRetentionDays: e.AUDIT_RETENTION_DAYS,
  /** Agent messages in a row (no person's between) a thread or a conversation's top level takes; the next answers 429 agent_chain_limit (level 3). */
  agentChainLimit: e.AGENT_CHAIN_LIMIT,
  /** A fault a test asks a child process to have (shared/http/idempotency.ts). */
  testFault: e.TEST_FAULT,
  trackerHosts: e.TRACKER_HOSTS,
  codeHosts: e.CODE_HOSTS,
  /** Browser origins allowed to call the API and read the stream (exact matches); empty: no CORS. */
  corsOrigins: e.CORS_ORIGINS,
  /** Whose X-Forwarded-For is believed (none by default): shared/http/client-address.ts. */
  trustedProxies: e.TRUSTED_PROXIES,
  logLevel: e.LOG_LEVEL,
  /** Whether shared/embedded.ts may start PGlite, redis-server and the S3 server when nothing answers. */
  embedded: e.EMBEDDED,
  /** Event subscriptions and their delivery by the worker (services/core/event-subscriptions, docs/bots.md). */
  eventDelivery: {
    allowPrivate: e.EVENT_SUBSCRIPTION_ALLOW_PRIVATE,
    timeoutMs: e.EVENT_DELIVERY_TIMEOUT_MS,
    retryBaseMs: e.EVENT_DELIVERY_RETRY_BASE_MS,
    retryMaxMs: e.EVENT_DELIVERY_RETRY_MAX_MS,
    retryWindowMs: e.EVENT_DELIVERY_RETRY_WINDOW_SECONDS * 1000,
    concurrency: e.EVENT_DELIVERY_CONCURRENCY,
    perSubscription: e.EVENT_DELIVERY_PER_SUBSCRIPTION,
    perOwner: e.EVENT_DELIVERY_PER_OWNER,
    claimIdleMs: e.EVENT_DELIVERY_CLAIM_IDLE_MS,
  },
  /** Requests to addresses users give (shared/http/outbound-fetch.ts). */
  outbound: { dnsServers: e.OUTBOUND_DNS_SERVERS, perOwner: e.OUTBOUND_PER_OWNER },
  /** Link previews (services/core/unfurls). */
  unfurls: { allowPrivate: e.UNFURL_ALLOW_PRIVATE },
  /** Email (services/core/email); null when SMTP_URL or MAIL_FROM is not set: nothing is sent. */
  email: e.SMTP_URL && e.MAIL_FROM ? { smtpUrl: e.SMTP_URL, from: e.MAIL_FROM, notifyDelaySeconds: e.EMAIL_NOTIFY_DELAY } : null,
  /** 2 or 3: what the service offers (shared/feature-level.ts). */
  featureLevel: e.FEATURE_LEVEL,
  /** Single sign-on (services/core/auth/oidc.ts); null when not configured. */
  oidc:
    e.OIDC_ISSUER && e.OIDC_CLIENT_ID && e.OIDC_CLIENT_SECRET
      ? {
          issuer: e.OIDC_ISSUER,
          clientId: e.OIDC_CLIENT_ID,
          clientSecret: e.OIDC_CLIENT_SECRET,
          name: e.OIDC_NAME ?? new URL(e.OIDC_ISSUER).host,
          autoCreate: e.OIDC_AUTO_CREATE,
        }
      : null,
  /** scrypt cost for new password hashes (services/core/auth/passwords.ts). */
  passwordScryptN: e.PASSWORD_SCRYPT_N,
}));

export type Config = z.output<typeof ConfigSchema>;

export class ConfigError extends Error {}

/** Reads the environment once; throws ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Empty strings count as unset, as they do in most twelve-factor tools.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = ConfigSchema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  return parsed.data;
}
