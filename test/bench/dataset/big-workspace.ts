// The ten-million-message workspace of bench scenario 8, made in SQL
// (generate_series), not through the API: posting 10M messages through HTTP
// would take hours on this box. One workspace, users, channels of skewed sizes
// (a few of about a tenth of all messages each), threads, reactions, and words
// chosen so that full-text search has a rare word and a common one.
//
// Everything is deterministic (ids are md5 of a name and a number), so the
// bench finds its probe user, largest channel and largest thread again
// without storing them. `small` is the same recipe at a size a test builds
// in seconds (test/api/bench-dataset.test.ts), so the recipe cannot rot.
import type pg from 'pg';

export interface DatasetSize {
  name: string;
  users: number;
  channels: number;
  messages: number;
  /** Channels that each get bigShare of all top-level messages. */
  bigChannels: number;
  bigShare: number;
  /** Replies, as a share of all messages. */
  replyShare: number;
  /** Inserted per statement (progress is logged between chunks). */
  chunk: number;
}

export const DATASET_SIZES = {
  full: { name: 'full', users: 10_000, channels: 1_000, messages: 10_000_000, bigChannels: 3, bigShare: 0.1, replyShare: 0.1, chunk: 1_000_000 },
  /** The size of scenario 2's data set: what scenario 8 compares the full set with. */
  compare: { name: '100k', users: 1_000, channels: 200, messages: 100_000, bigChannels: 3, bigShare: 0.1, replyShare: 0.1, chunk: 100_000 },
  small: { name: 'small', users: 300, channels: 40, messages: 20_000, bigChannels: 3, bigShare: 0.2, replyShare: 0.1, chunk: 5_000 },
} satisfies Record<string, DatasetSize>;

/** The words of the search scenario: RARE_WORD in about ten messages at any size, COMMON_WORD in every other one. */
export const RARE_WORD = 'zanzibar';
export const COMMON_WORD = 'hello';
const VOCABULARY = `the a deploy build release review merge branch test flaky fix bug issue ticket agent model prompt latency
  database index query cache redis queue worker stream gateway channel thread reply reaction emoji upload file image
  meeting standup lunch coffee weekend monday friday customer support incident alert pager dashboard metric`
  .split(/\s+/)
  .filter(Boolean);

/** Ids the bench needs, the same at every build of a size. */
export const dataset = {
  workspaceId: `md5('bench-ws')::uuid`,
  user: (n: number | string) => `md5('bench-u' || (${n}))::uuid`,
  channel: (n: number | string) => `md5('bench-c' || (${n}))::uuid`,
  message: (g: number | string) => `md5('bench-m' || (${g}))::uuid`,
  reply: (r: number | string) => `md5('bench-r' || (${r}))::uuid`,
  /** The probe user: a member of 200 channels (or all, if fewer), the largest among them. */
  probeUser: 2,
  probeChannels: 200,
  /** The largest channel and the root of the largest thread. */
  largestChannel: 1,
};

/** Top-level messages, replies and thread roots of a size. */
export function shape(size: DatasetSize) {
  const replies = Math.round(size.messages * size.replyShare);
  const topLevel = size.messages - replies;
  const roots = Math.floor(topLevel / 100);
  return { replies, topLevel, roots };
}

/**
 * Cumulative shares of channels 1..n-1 for width_bucket(): bigChannels get
 * bigShare each, the rest a Zipf-like 1/k^0.8 of what is left.
 */
function channelThresholds(size: DatasetSize): number[] {
  const rest = size.channels - size.bigChannels;
  const weights = Array.from({ length: rest }, (_, k) => 1 / (k + 1) ** 0.8);
  const sum = weights.reduce((a, b) => a + b, 0);
  const left = 1 - size.bigChannels * size.bigShare;
  const shares = [...Array.from({ length: size.bigChannels }, () => size.bigShare), ...weights.map((w) => (w / sum) * left)];
  const thresholds: number[] = [];
  let cum = 0;
  for (const s of shares.slice(0, -1)) thresholds.push((cum += s));
  return thresholds;
}

// A low-discrepancy sequence: message g's position in [0, 1), spread evenly,
// so channels interleave in time as they would in a real workspace (a channel's
// messages are not stored side by side, which would flatter every page read).
const GOLDEN = 0.6180339887498949;
const frac = (g: string, k = GOLDEN) => `((${g})::float8 * ${k} - floor((${g})::float8 * ${k}))`;

export interface BuildReport {
  seconds: number;
  steps: { step: string; seconds: number }[];
}

/**
 * Fills a migrated, empty database. `log` hears each step. Foreign key
 * triggers are off for the session (session_replication_role = replica:
 * every reference is made consistent by construction) and the messages
 * table's secondary indexes are dropped and rebuilt around the bulk insert.
 */
export async function buildBigWorkspace(db: pg.Client, size: DatasetSize, log: (msg: string) => void = () => undefined): Promise<BuildReport> {
  const started = Date.now();
  const steps: BuildReport['steps'] = [];
  const step = async (name: string, sql: string, values: unknown[] = []) => {
    const t = Date.now();
    await db.query(sql, values);
    const seconds = (Date.now() - t) / 1000;
    steps.push({ step: name, seconds });
    log(`${name}: ${seconds.toFixed(1)} s`);
  };
  const { replies, topLevel, roots } = shape(size);
  const ws = dataset.workspaceId;
  const t0 = `timestamptz '2023-01-01T00:00:00Z'`;
  // About three years of history, whatever the size.
  const stepSeconds = (3 * 365 * 86400) / topLevel;
  const thresholds = channelThresholds(size);
  const channelOf = (g: string) => dataset.channel(`width_bucket(${frac(g)}, $1::float8[]) + 1`);

  await db.query(`SET session_replication_role = replica`);
  await db.query(`SET maintenance_work_mem = '512MB'`);
  await step('workspace and users', `
    INSERT INTO workspaces (id, name) VALUES (${ws}, 'bench-10m');
    INSERT INTO users (id, workspace_id, name, display_name, role, is_agent, created_at)
    SELECT ${dataset.user('i')}, ${ws}, 'user' || i, 'User ' || i, CASE WHEN i = 1 THEN 'owner' ELSE 'member' END, i % 10 = 0, ${t0}
      FROM generate_series(1, ${size.users}) i;`);
  await step('channels', `
    INSERT INTO channels (id, workspace_id, kind, name, is_default, created_by, created_at)
    SELECT ${dataset.channel('i')}, ${ws}, 'channel', CASE WHEN i <= ${size.bigChannels} THEN 'big-' ELSE 'c-' END || i,
           i <= ${size.bigChannels}, ${dataset.user(1)}, ${t0}
      FROM generate_series(1, ${size.channels}) i;`);
  // Everyone is in the big channels; each user in 3 to 17 others; the probe user in 200.
  await step('memberships', `
    INSERT INTO channel_members (channel_id, user_id, workspace_id)
    SELECT ${dataset.channel('c')}, ${dataset.user('u')}, ${ws}
      FROM generate_series(1, ${size.users}) u, generate_series(1, ${size.bigChannels}) c;
    INSERT INTO channel_members (channel_id, user_id, workspace_id)
    SELECT ${dataset.channel(`${size.bigChannels + 1} + ((u * 37 + j * 53) % ${size.channels - size.bigChannels})`)}, ${dataset.user('u')}, ${ws}
      FROM generate_series(1, ${size.users}) u, generate_series(1, 3 + u % 15) j
    ON CONFLICT DO NOTHING;
    INSERT INTO channel_members (channel_id, user_id, workspace_id)
    SELECT ${dataset.channel('c')}, ${dataset.user(dataset.probeUser)}, ${ws}
      FROM generate_series(1, ${Math.min(dataset.probeChannels, size.channels)}) c
    ON CONFLICT DO NOTHING;`);

  // Secondary indexes of messages and of its search words (whatever migrations
  // made them) are rebuilt once at the end: cheaper than 10M index insertions each.
  const { rows: indexes } = await db.query<{ name: string; def: string }>(`
    SELECT i.indexname AS name, i.indexdef AS def FROM pg_indexes i
     WHERE i.schemaname = current_schema() AND i.tablename IN ('messages', 'message_search')
       AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)`);
  for (const ix of indexes) await db.query(`DROP INDEX ${ix.name}`);

  const words = VOCABULARY;
  const pick = (g: string, k: number) => `($2::text[])[1 + ((${g}) / ${k}) % ${words.length}]`;
  // Message g's text: three words of the vocabulary, the common word in every
  // other one, the rare word in about ten messages.
  const rareEvery = Math.max(1, Math.floor(topLevel / 10));
  const content = (g: string) =>
    `'message ' || ${g} || ' ' || ${pick(g, 1)} || ' ' || ${pick(g, 7)} || ' ' || ${pick(g, 49)}` +
    ` || CASE WHEN ${g} % 2 = 0 THEN ' ${COMMON_WORD}' ELSE '' END || CASE WHEN ${g} % ${rareEvery} = 17 THEN ' ${RARE_WORD}' ELSE '' END`;
  for (let from = 1; from <= topLevel; from += size.chunk) {
    const to = Math.min(topLevel, from + size.chunk - 1);
    await step(`messages ${from}..${to} of ${topLevel}`, `
      INSERT INTO messages (id, workspace_id, channel_id, author_id, content, created_at, has_reactions)
      SELECT ${dataset.message('g')}, ${ws}, ${channelOf('g')}, ${dataset.user(`1 + (g * 7919) % ${size.users}`)},
             ${content('g')}, ${t0} + g * interval '${stepSeconds.toFixed(6)} seconds', g % 50 = 3
        FROM generate_series(${from}::bigint, ${to}::bigint) g`, [thresholds, words]);
  }
  // Replies go to every hundredth top-level message (g % 100 = 7), skewed (x^3)
  // towards the first roots: the first thread gets about 2% of all replies.
  const rootG = (r: string) => `(1 + floor(${roots} * power(${frac(r, 0.7548776662466927)}, 3))::bigint) * 100 - 93`;
  for (let from = 1; from <= replies; from += size.chunk) {
    const to = Math.min(replies, from + size.chunk - 1);
    await step(`replies ${from}..${to} of ${replies}`, `
      INSERT INTO messages (id, workspace_id, channel_id, author_id, thread_id, content, created_at)
      SELECT ${dataset.reply('r')}, ${ws}, ${channelOf('x.g')}, ${dataset.user(`1 + (r * 104729) % ${size.users}`)},
             ${dataset.message('x.g')}, 'reply ' || ${content('r')},
             ${t0} + x.g * interval '${stepSeconds.toFixed(6)} seconds' + (r % 997) * interval '1 minute'
        FROM generate_series(${from}::bigint, ${to}::bigint) r, LATERAL (SELECT ${rootG('r')} AS g) x`, [thresholds, words]);
  }
  // Search words as level 3 writes them with each post (migration 090).
  await step('search words', `
    INSERT INTO message_search (message_id, workspace_id, channel_id, seq, words)
    SELECT id, workspace_id, channel_id, seq, axid_search_vector(content) FROM messages`);
  await step('threads', `
    INSERT INTO threads (root_message_id, workspace_id, channel_id, reply_count, last_reply_at, created_at)
    SELECT thread_id, ${ws}, min(channel_id::text)::uuid, count(*), max(created_at), min(created_at)
      FROM messages WHERE thread_id IS NOT NULL GROUP BY thread_id;
    UPDATE messages m SET has_replies = true FROM threads t WHERE t.root_message_id = m.id;`);
  await step('reactions', `
    INSERT INTO reactions (message_id, user_id, emoji, created_at)
    SELECT ${dataset.message('g')}, ${dataset.user(`1 + (g * 31 + k * 7) % ${size.users}`)}, (ARRAY['+1', 'tada', 'eyes'])[k],
           ${t0} + g * interval '${stepSeconds.toFixed(6)} seconds' + k * interval '1 minute'
      FROM generate_series(3::bigint, ${topLevel}::bigint, 50::bigint) g, generate_series(1, 1 + (g / 50)::int % 3) k;`);
  for (const ix of indexes) await step(`index ${ix.name}`, ix.def);
  await db.query(`RESET session_replication_role`);
  await step('vacuum analyze', `VACUUM (ANALYZE) messages, message_search, threads, reactions, channel_members, channels, users`);
  await db.query(
    `CREATE TABLE IF NOT EXISTS bench_dataset (size text PRIMARY KEY, built_at timestamptz NOT NULL DEFAULT now(), seconds float8 NOT NULL, steps jsonb NOT NULL)`,
  );
  await db.query(`INSERT INTO bench_dataset (size, seconds, steps) VALUES ($1, $2, $3)`, [size.name, (Date.now() - started) / 1000, JSON.stringify(steps)]);
  return { seconds: (Date.now() - started) / 1000, steps };
}
