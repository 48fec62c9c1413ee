// A hung dependency is not a stopped one: a paused (SIGSTOP) PostgreSQL or
// Redis keeps its sockets open and answers nothing. Every request still gets
// a bounded answer (503 service_unavailable with Retry-After where it needs
// the hung one), /readyz says 503 with Retry-After, and a write that answered
// 503 never commits once the server resumes (docs/reliability.md, "A hung
// dependency"). Private servers only, paused and resumed here.
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { Redis as RedisNode } from 'ioredis';
import pg from 'pg';
import { startStack, type Stack } from '../../services/stack.js';
import { createLogger } from '../../shared/logger.js';
import { Client } from '../support/client.js';
import { expectError, expectOk } from '../support/expect.js';
import { bucketKeys, uploadFile, waitFor } from '../support/files.js';
import { PrivatePostgres } from '../support/private-postgres.js';
import { PrivateRedis } from '../support/private-redis.js';
import { newWorkspace, testEnv, uniqueName, type TestEnv } from '../support/stack.js';

/** The bound each answer must keep: the client-side timeouts (1 s + 1 s, below) with room for a busy machine. */
const BOUND_MS = 6_000;

async function timed<T>(request: Promise<T>): Promise<{ res: T; ms: number }> {
  const started = Date.now();
  const res = await request;
  return { res, ms: Date.now() - started };
}

function expectUnavailable(res: { status: number; headers: Headers; text?: string }) {
  expectError(res as never, 503, 'service_unavailable');
  expect(res.headers.get('retry-after')).to.match(/^[1-9]\d*$/);
}

describe('requests while PostgreSQL is paused (SIGSTOP)', function () {
  this.timeout(120_000);
  let server: PrivatePostgres;
  let replica: PrivatePostgres;
  let env: TestEnv;
  let s: Stack;
  const lines: string[] = [];

  before(async () => {
    server = await PrivatePostgres.start();
    // With a read replica, as deployed: a request that may have written asks the primary where it is afterwards.
    replica = await PrivatePostgres.replicaOf(server);
    env = testEnv({ DATABASE_URL: server.url('axid'), DATABASE_READ_URL: replica.url('axid'), DB_STATEMENT_TIMEOUT_MS: '1000' });
    const sink = new Writable({
      write(chunk, _e, done) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        done();
      },
    });
    s = await startStack(env.config, createLogger('warn', sink));
  });

  after(async () => {
    await server?.resume().catch(() => undefined);
    await s?.close();
    await env?.cleanup();
    await replica?.stop();
    await server?.stop();
  });

  it('answers 503 with Retry-After within seconds; a post or upload that answered 503 never commits after the server resumes, and the upload leaves no object', async () => {
    const ws = await newWorkspace(s);
    const channel = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('hung') }), 201).data;
    expectOk(await ws.owner.post(`/api/v1/channels/${channel.id}/messages`, { content: 'before the pause' }), 201);
    const anon = new Client(s.url);

    await server.pause();
    const contents = ['during the pause 1', 'during the pause 2', 'during the pause 3'];
    // At once, so that several pooled connections hang together, as under load.
    const [read, ...answers] = await Promise.all([
      timed(ws.owner.get(`/api/v1/channels/${channel.id}/messages`)),
      ...contents.map((content) => timed(ws.owner.post(`/api/v1/channels/${channel.id}/messages`, { content }))),
      timed(ws.owner.post('/api/v1/users', { name: uniqueName('hung') })),
      // An upload stores its object before its row: the object goes when the row cannot be written.
      timed(uploadFile(s.url, { key: ws.ownerKey, data: Buffer.from('stored, then orphaned'), name: 'orphan.txt', type: 'text/plain' })),
    ]);
    for (const { res, ms } of answers) {
      expectUnavailable(res);
      expect(ms).to.be.below(BOUND_MS);
    }
    // A read is answered by the replica once it has the key's writes, or else by the primary: 503.
    if (read.res.status !== 200) expectUnavailable(read.res);
    expect(read.ms).to.be.below(BOUND_MS);
    // A write that failed because the primary did not answer does not then ask
    // it for its write position (shared/http/route.ts): that waited a second
    // bound, and with a paused primary under load answers took twice as long.
    expect(lines.filter((l) => l.includes('could not store a write position')), 'a wait for the write position after a 503').to.deep.equal([]);
    const ready = await timed(anon.get('/readyz'));
    expect(ready.res.status).to.equal(503);
    expect(ready.res.headers.get('retry-after')).to.match(/^[1-9]\d*$/);
    expect(ready.ms).to.be.below(BOUND_MS);

    expect(await bucketKeys(s, `files/${ws.workspaceId}/`), 'the object of the upload that answered 503').to.deep.equal([]);

    await server.resume();
    await waitFor(async () => (await ws.owner.get('/api/v1/channels')).status === 200, 'requests to succeed again', 30_000);
    // What the paused server was sent before its clients gave up has run by
    // now: every session it belonged to ended (its socket closed under it).
    const direct = new pg.Client({ connectionString: server.url('axid') });
    await direct.connect();
    try {
      await waitFor(
        async () => {
          const { rows } = await direct.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = 'axid' AND state IN ('active', 'idle in transaction', 'idle in transaction (aborted)') AND pid <> pg_backend_pid()`);
          return rows[0].n === 0;
        },
        'the abandoned sessions to end',
        30_000,
      );
      const { rows } = await direct.query('SELECT content FROM messages WHERE content = ANY($1)', [contents]);
      expect(rows, 'a post that answered 503 committed later').to.deep.equal([]);
      expect((await direct.query("SELECT id FROM files WHERE name = 'orphan.txt'")).rows, 'an upload that answered 503 committed later').to.deep.equal([]);
    } finally {
      await direct.end();
    }
    // A retry posts once.
    expectOk(await ws.owner.post(`/api/v1/channels/${channel.id}/messages`, { content: contents[0] }), 201);
    const history = expectOk(await ws.owner.get(`/api/v1/channels/${channel.id}/messages`)).data;
    expect(history.map((m: { content: string }) => m.content).filter((c: string) => contents.includes(c))).to.deep.equal([contents[0]]);
    expect((await anon.get('/readyz')).status).to.equal(200);
  });
});

describe('requests while Redis is paused (SIGSTOP)', function () {
  this.timeout(90_000);
  let redis: PrivateRedis;
  let env: TestEnv;
  let s: Stack;

  before(async () => {
    redis = await PrivateRedis.start();
    env = testEnv({ REDIS_URL: redis.url, REDIS_COMMAND_TIMEOUT_MS: '500' });
    s = await startStack(env.config, createLogger(env.config.logLevel));
  });

  after(async () => {
    redis?.resume();
    await s?.close();
    await env?.cleanup();
    await redis?.stop();
  });

  it('answers every request within seconds: writes go on (rate limits counted in memory), typing and /readyz say 503 with Retry-After', async () => {
    const ws = await newWorkspace(s);
    const channel = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('hung') }), 201).data;
    const anon = new Client(s.url);
    // The owner's rate-limit count, as Redis holds it (rate-limiter-flexible: `<prefix>rl:key:<key id>`).
    const direct = new RedisNode(redis.url);
    const [countKey] = await direct.keys(`${env.config.redisKeyPrefix}rl:key:*`);
    const countInRedis = async () => Number(await direct.get(countKey!));
    const before = await countInRedis();

    redis.pause();
    const post = await timed(ws.owner.post(`/api/v1/channels/${channel.id}/messages`, { content: 'while redis sleeps' }));
    expect(post.res.status, post.res.text).to.equal(201);
    expect(post.ms).to.be.below(BOUND_MS);
    const read = await timed(ws.owner.get(`/api/v1/channels/${channel.id}/messages`));
    expect(read.res.status).to.equal(200);
    expect(read.ms).to.be.below(BOUND_MS);
    const typing = await timed(ws.owner.post(`/api/v1/channels/${channel.id}/typing`, {}));
    expectUnavailable(typing.res);
    expect(typing.ms).to.be.below(BOUND_MS);
    const ready = await timed(anon.get('/readyz'));
    expect(ready.res.status).to.equal(503);
    expect(ready.res.headers.get('retry-after')).to.match(/^[1-9]\d*$/);
    expect(ready.ms).to.be.below(BOUND_MS);

    redis.resume();
    await waitFor(async () => (await anon.get('/readyz')).status === 200, '/readyz to say ready again', 30_000);
    // What was sent to the paused server ran when it woke: the first request's
    // count at most (none if a command of the stack's own timed out first).
    // Once a command had waited out its bound, the requests after it skipped
    // Redis (counted in memory, typing refused at once) instead of each
    // waiting a bound of its own (shared/redis.ts `answering`).
    try {
      expect((await countInRedis()) - before, 'requests counted in Redis while it did not answer').to.be.at.most(1);
    } finally {
      direct.disconnect();
    }
    expect((await ws.owner.post(`/api/v1/channels/${channel.id}/typing`, {})).status).to.equal(204);
  });
});
