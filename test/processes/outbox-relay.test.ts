// The outbox relay (shared/relay/) against Postgres and Redis, with a second
// relay standing for a second process: one is elected at a time, the other
// takes over when the elected one's connection dies, and every outbox row
// reaches the stream once, in order, with its outbox id. The loop's rules one
// by one, without I/O: test/unit/outbox-relay.test.ts.
import { expect } from 'chai';
import type { Stack } from '../../services/stack.js';
import { ACCESS_EVENT_TYPES } from '../../shared/events.js';
import { createLogger } from '../../shared/logger.js';
import { createOutboxRelay, type OutboxRelay } from '../../shared/relay/outbox-relay.js';
import { keys } from '../../shared/redis.js';
import { waitFor } from '../support/files.js';
import { separateStack } from '../support/separate-stack.js';

describe('outbox relay: election and takeover', function () {
  this.timeout(60_000);
  let s: Stack;
  let stop: () => Promise<void>;
  let second: OutboxRelay | null = null;

  before(async () => {
    ({ stack: s, stop } = await separateStack({ ROLES: 'api' }));
  });
  after(async () => {
    await second?.stop();
    await stop?.();
  });

  const record = async (n: number, type = 'channel.updated') => {
    const rows: { id: string }[] = await s.rt
      .db('outbox')
      .insert(Array.from({ length: n }, () => ({ event: JSON.stringify({ type, to: { scope: 'workspace', workspace_id: 'w' }, data: {} }) })))
      .returning('id');
    return rows.map((r) => Number(r.id));
  };
  const entries = async (key = s.rt.bus.shards[0]!.events) =>
    (await s.rt.redis.xrange(key, '-', '+')).map(([, fields]) => ({ e: fields[1]!, o: Number(fields[3]), fields: fields.length }));

  it('publishes through the elected relay only; after its connection dies a relay is elected again, and no row is published twice', async () => {
    const names = keys(s.rt.config.redisKeyPrefix);
    second = createOutboxRelay({
      db: s.rt.db,
      databaseUrl: s.rt.config.databaseUrl,
      redis: s.rt.redis,
      redisUrl: s.rt.config.redisUrl,
      bus: s.rt.bus,
      retentionMs: null,
      accessStreamKey: names.accessEvents,
      wakeChannel: names.outboxWake,
      sole: false,
      log: createLogger('silent'),
      metrics: s.rt.metrics,
    });
    await second.start(); // the stack's relay holds the lock: this one is not elected

    const before = await record(3);
    second.committed(); // a commit in the other process wakes the elected relay
    await waitFor(async () => (await entries()).length === before.length, 'the elected relay to publish');
    expect((await entries()).map((e) => e.o)).to.deep.equal(before);

    // Rows the elected relay published but whose position it did not record
    // when it died: the next relay finds them in the stream and publishes only the rest.
    const leftBehind = await record(2);
    for (const id of leftBehind) {
      await s.rt.redis.xadd(s.rt.bus.shards[0]!.events, '*', 'e', JSON.stringify({ type: 'channel.updated', to: { scope: 'workspace', workspace_id: 'w' }, data: {} }), 'o', String(id));
    }
    const after = await record(2);
    const { rows: killed } = await s.rt.db.raw(
      `SELECT pg_terminate_backend(l.pid) AS done FROM pg_locks l
        JOIN pg_stat_activity a ON a.pid = l.pid
       WHERE l.locktype = 'advisory' AND l.granted AND a.datname = current_database()`,
    );
    expect(killed).to.have.length(1);
    await waitFor(async () => (await entries()).length === before.length + leftBehind.length + after.length, 'the other relay to be elected and publish', 20_000);

    const published = (await entries()).map((e) => e.o);
    expect(published).to.deep.equal([...before, ...leftBehind, ...after]);
    // channel.updated changes access: it is on the access stream too, with its id.
    expect(ACCESS_EVENT_TYPES.has('channel.updated')).to.equal(true);
    expect((await entries(names.accessEvents)).map((e) => e.o)).to.deep.equal([...before, ...after]);
  });
});
