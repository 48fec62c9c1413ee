// Read replicas (DATABASE_READ_URL, shared/db/read-replicas.ts): a private
// primary and a streaming replica of it (initdb, pg_basebackup -R, spare
// ports, removed after; never the shared server). A key reads its own writes
// while the replica is held behind; other keys read from the replica; a
// replica stopped costs no 5xx and reads go to the primary; back, reads return.
import { expect } from 'chai';
import pg from 'pg';
import { startStack, type Stack } from '../../services/stack.js';
import { ReadRouting, parseLsn } from '../../shared/db/read-replicas.js';
import { createLogger } from '../../shared/logger.js';
import { createMetrics } from '../../shared/metrics.js';
import { Client } from '../support/client.js';
import { expectOk } from '../support/expect.js';
import { waitFor } from '../support/files.js';
import { PrivatePostgres } from '../support/private-postgres.js';
import { openRaw } from '../support/sse.js';
import { newWorkspace, testEnv, uniqueName, type TestEnv } from '../support/stack.js';

/** Reads counted by target since `before` (axid_db_reads_total). */
async function readsSince(s: Stack, before: Record<string, number> = {}) {
  const now: Record<string, number> = {};
  for (const v of (await s.rt.metrics.dbReads.get()).values) {
    const key = `${v.labels.target}/${v.labels.reason}`;
    now[key] = v.value - (before[key] ?? 0);
  }
  return now;
}
const total = (counts: Record<string, number>, target: string) =>
  Object.entries(counts)
    .filter(([k]) => k.startsWith(`${target}/`))
    .reduce((n, [, v]) => n + v, 0);

describe('read replicas (DATABASE_READ_URL)', function () {
  this.timeout(240_000);
  let primary: PrivatePostgres;
  let replica: PrivatePostgres;
  let replicaAdmin: pg.Client;
  let env: TestEnv;
  let s: Stack;

  /** Waits until the replica answers and has replayed everything the primary wrote so far. */
  async function caughtUp() {
    const { rows } = await s.rt.db.raw<{ rows: { lsn: string }[] }>('SELECT pg_current_wal_insert_lsn()::text AS lsn');
    const target = parseLsn(rows[0]!.lsn)!;
    await waitFor(
      async () => {
        await s.rt.reads.polled();
        const [r] = s.rt.reads.state();
        return r!.up && r!.replayed >= target;
      },
      'the replica to catch up',
      30_000,
    );
  }

  before(async () => {
    primary = await PrivatePostgres.start();
    replica = await PrivatePostgres.replicaOf(primary);
    replicaAdmin = new pg.Client({ connectionString: replica.url('postgres') });
    // The replica is stopped in the second test: its session ends then.
    replicaAdmin.on('error', () => undefined);
    await replicaAdmin.connect();
    // A generous lag bound here: while replay is paused, other keys must still be sent to the replica.
    // No page cache: these reads are about where a read goes, and a newest page the writer's primary read
    // kept would answer the other keys before the replica could (test/api/page-cache.test.ts has the cache).
    env = testEnv({ DATABASE_URL: primary.url('axid'), DATABASE_READ_URL: replica.url('axid'), DATABASE_READ_MAX_LAG_MS: '600000', PAGE_CACHE_SECONDS: '0' });
    s = await startStack(env.config, createLogger(env.config.logLevel));
  });

  after(async () => {
    await replicaAdmin?.end().catch(() => undefined);
    await s?.close();
    await env?.cleanup();
    await replica?.stop();
    await primary?.stop();
  });

  it('a key reads its own writes while the replica is held behind (1,000 pairs, 0 misses); other keys read from the replica', async () => {
    const ws = await newWorkspace(s);
    const channel = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('ryw') }), 201).data;
    const other = await ws.user();
    expectOk(await other.client.post(`/api/v1/channels/${channel.id}/members`, { user_id: other.id }), 201);
    const seed = expectOk(await ws.owner.post(`/api/v1/channels/${channel.id}/messages`, { content: 'before the pause' }), 201).data;
    await caughtUp();
    await replicaAdmin.query('SELECT pg_wal_replay_pause()');

    const before = await readsSince(s);
    let misses = 0;
    let last = seed.id as string;
    for (let i = 0; i < 1000; i++) {
      const posted = expectOk(await ws.owner.post(`/api/v1/channels/${channel.id}/messages`, { content: `pair ${i}` }), 201).data;
      last = posted.id;
      const page = expectOk(await ws.owner.get(`/api/v1/channels/${channel.id}/messages?limit=1`)).data;
      if (page[0]?.id !== posted.id) misses++;
    }
    expect(misses, 'reads by the writing key that missed its own write').to.equal(0);
    const ownReads = await readsSince(s, before);
    expect(ownReads['primary/own_write'], 'the writer was sent to the primary').to.be.at.least(1000);

    // Another key: the replica (held behind) answers, without the writer's new messages.
    const mark = await readsSince(s);
    const seen = expectOk(await other.client.get(`/api/v1/channels/${channel.id}/messages?limit=1`)).data;
    expect(seen[0]?.id).to.equal(seed.id);
    expect(seen[0]?.id).to.not.equal(last);
    expect(total(await readsSince(s, mark), 'replica')).to.equal(1);

    // A replica lagging past the bound is skipped (a router with a 300 ms bound beside the stack's).
    const strict = new ReadRouting({
      primary: s.rt.db,
      replicaUrls: [replica.url('axid')],
      maxLagMs: 300,
      redis: s.rt.redis,
      prefix: env.config.redisKeyPrefix,
      metrics: createMetrics(),
      log: s.rt.log,
      pollMs: 50,
    });
    try {
      strict.start();
      await waitFor(async () => {
        await strict.polled();
        return strict.state()[0]!.up && strict.state()[0]!.lagMs > 300;
      }, 'the strict router to see the lag');
      const where = await strict.read(null, async (db) => (await db.raw('SELECT pg_is_in_recovery() AS r')).rows[0].r as boolean);
      expect(where, 'a lagging replica is skipped').to.equal(false);
    } finally {
      await strict.stop();
    }

    await replicaAdmin.query('SELECT pg_wal_replay_resume()');
    await caughtUp();
    const fresh = expectOk(await other.client.get(`/api/v1/channels/${channel.id}/messages?limit=1`)).data;
    expect(fresh[0]?.id, 'caught up, the replica has the writes').to.equal(last);
  });

  it('a stream opens on the primary: its init has what another key committed before it, while the replica is held behind', async () => {
    const ws = await newWorkspace(s);
    const other = await ws.user();
    await caughtUp();
    await replicaAdmin.query('SELECT pg_wal_replay_pause()');
    try {
      const name = uniqueName('renamed');
      expectOk(await ws.owner.patch('/api/v1/workspaces/current', { name }));
      // The replica, held behind, still has the old name for the other key's reads.
      expect(expectOk(await other.client.get('/api/v1/workspaces/current')).data.name).to.not.equal(name);
      // A stream's opening grants access and indexes memberships: read on the
      // primary, or a revocation committed before it could be missed.
      const stream = await openRaw(s.url, other.key);
      try {
        expect(stream.status).to.equal(200);
        expect(stream.frames[0]?.event).to.equal('init');
        expect(stream.frames[0]?.data.workspace.name).to.equal(name);
      } finally {
        stream.close();
      }
    } finally {
      await replicaAdmin.query('SELECT pg_wal_replay_resume()');
      await caughtUp();
    }
  });

  it('a replica stopped: no 5xx, reads from the primary, /readyz stays 200; resumed: reads go back to it', async () => {
    const ws = await newWorkspace(s);
    const channel = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('down') }), 201).data;
    const other = await ws.user();
    expectOk(await other.client.post(`/api/v1/channels/${channel.id}/members`, { user_id: other.id }), 201);
    await caughtUp();
    // Warm the router's replica pool, so that the stop breaks open connections too.
    expectOk(await other.client.get(`/api/v1/channels/${channel.id}/messages`));

    await replica.down();
    const mark = await readsSince(s);
    const statuses: number[] = [];
    for (let i = 0; i < 100; i++) {
      const posted = await ws.owner.post(`/api/v1/channels/${channel.id}/messages`, { content: `while down ${i}` });
      statuses.push(posted.status);
      const own = await ws.owner.get(`/api/v1/channels/${channel.id}/messages?limit=1`);
      statuses.push(own.status);
      if (own.status === 200) expect(own.body.data[0].id).to.equal(posted.body.data.id);
      statuses.push((await other.client.get(`/api/v1/channels/${channel.id}/messages?limit=1`)).status);
      statuses.push((await other.client.get('/api/v1/users/me')).status);
    }
    expect(statuses.filter((st) => st >= 500), 'no 5xx while the replica is away').to.deep.equal([]);
    expect(new Set(statuses)).to.deep.equal(new Set([200, 201]));
    const whileDown = await readsSince(s, mark);
    expect(total(whileDown, 'replica')).to.equal(0);
    expect(total(whileDown, 'primary')).to.be.at.least(300);
    expect((await new Client(s.url).get('/readyz')).status).to.equal(200);
    const metrics = await (await fetch(`${s.url}/metrics`)).text();
    expect(metrics).to.match(/axid_db_replica_up\{replica="0"\} 0/);

    await replica.up();
    await caughtUp();
    const back = await readsSince(s);
    expectOk(await other.client.get(`/api/v1/channels/${channel.id}/messages?limit=1`));
    expect(total(await readsSince(s, back), 'replica'), 'reads return to the replica').to.equal(1);
    expect(await (await fetch(`${s.url}/metrics`)).text()).to.match(/axid_db_replica_lag_seconds\{replica="0"\} \d/);
  });
});
