// The newest history page kept in Redis (services/core/messages/page-cache.ts).
// Each stack here is checked against a peer API process on the same database
// that keeps no page (PAGE_CACHE_SECONDS=0): after every kind of change the
// two answer byte for byte the same, on the process that wrote and on another
// one that had the page kept before the write (a writer's next read, on any
// process, sees the write).
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { expect } from 'chai';
import { loadConfig } from '../../shared/config.js';
import { createLogger } from '../../shared/logger.js';
import { listJson } from '../../shared/http/envelope.js';
import { createMetrics } from '../../shared/metrics.js';
import { createRedis } from '../../shared/redis.js';
import { startStack, type Stack } from '../../services/stack.js';
import { PageCache } from '../../services/core/messages/page-cache.js';
import { runRetention } from '../../services/core/retention/retention.jobs.js';
import { Client } from '../support/client.js';
import { expectOk } from '../support/expect.js';
import { level3Stack, newWorkspace, stack, uniqueName } from '../support/stack.js';

/** An API process beside `s`: the same database and Redis prefix. */
async function peerOf(s: Stack, overrides: Record<string, string>) {
  const c = s.rt.config;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'axid-peer-'));
  const config = loadConfig({
    DATABASE_URL: c.databaseUrl,
    REDIS_URL: c.redisUrl,
    REDIS_KEY_PREFIX: c.redisKeyPrefix,
    FEATURE_LEVEL: String(c.featureLevel),
    ROLES: 'api',
    MIGRATE_ON_START: 'false',
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    RATE_LIMIT_POINTS: '100000',
    ...overrides,
  });
  const peer = await startStack(config, createLogger('silent'));
  return {
    peer,
    async stop() {
      await peer.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A GET with exactly this Accept-Encoding (none when undefined): the answer's Content-Encoding and its raw bytes. */
function getRaw(url: string, key: string, acceptEncoding: string | undefined): Promise<{ status: number; encoding: string | undefined; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer ${key}` };
    if (acceptEncoding !== undefined) headers['accept-encoding'] = acceptEncoding;
    http
      .get(url, { headers, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, encoding: res.headers['content-encoding'], body: Buffer.concat(chunks) }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}
const decoded = (r: { encoding: string | undefined; body: Buffer }) =>
  (r.encoding === 'gzip' ? gunzipSync(r.body) : r.encoding === 'br' ? brotliDecompressSync(r.body) : r.body).toString();

const LIMIT = 50;
const pagesKey = (s: Stack, channelId: string) => `${s.rt.config.redisKeyPrefix}pages:${channelId}`;

for (const level of [2, 3] as const) {
  describe(`the newest page kept in Redis (level ${level})`, function () {
    this.timeout(60_000);
    let s: Stack;
    let uncached: Awaited<ReturnType<typeof peerOf>>;
    let other: Awaited<ReturnType<typeof peerOf>>;

    before(async () => {
      s = level === 2 ? stack() : await level3Stack();
      uncached = await peerOf(s, { PAGE_CACHE_SECONDS: '0' });
      other = await peerOf(s, {});
    });
    after(async () => {
      await uncached?.stop();
      await other?.stop();
    });

    /** The conversation's newest page (or a thread's) as `key` reads it on `server`: status and exact text. */
    const read = async (server: Stack, key: string, channelId: string, threadId?: string) => {
      const r = await new Client(server.url, key).get(`/api/v1/channels/${channelId}/messages?limit=${LIMIT}${threadId ? `&thread_id=${threadId}` : ''}`);
      return `${r.status} ${r.text}`;
    };
    const field = (threadId?: string) => `${level}:${threadId ?? ''}:${LIMIT}`;

    async function conversation() {
      const ws = await newWorkspace(s);
      const member = await ws.user();
      const channel = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('kept') }), 201).data.id as string;
      expectOk(await ws.owner.post(`/api/v1/channels/${channel}/members`, { user_id: member.id }), 201);
      const post = async (content: string, thread_id?: string) =>
        expectOk(await ws.owner.post(`/api/v1/channels/${channel}/messages`, { content, ...(thread_id ? { thread_id } : {}) }), 201).data as { id: string };
      return { ws, member, channel, post };
    }

    it('keeps the page a first reader read and answers the next from it, byte for byte what the database renders', async () => {
      const { ws, channel, post } = await conversation();
      const root = await post('root');
      await post('a reply', root.id);
      expectOk(await ws.owner.post(`/api/v1/channels/${channel}/messages/${root.id}/reactions`, { emoji: 'tada' }), 201);
      await post('**latest**');
      expect(await s.rt.redis.hget(pagesKey(s, channel), field())).to.equal(null);
      const first = await read(s, ws.ownerKey, channel);
      expect(first).to.match(/^200 /);
      expect(await s.rt.redis.hget(pagesKey(s, channel), field()), 'kept after the first read').to.be.a('string');
      expect(await read(s, ws.ownerKey, channel)).to.equal(first);
      expect(await read(other.peer, ws.ownerKey, channel), 'another process answers from it').to.equal(first);
      expect(await read(uncached.peer, ws.ownerKey, channel)).to.equal(first);
      // The hash lives PAGE_CACHE_SECONDS at most from its first read.
      const ttl = await s.rt.redis.pttl(pagesKey(s, channel));
      expect(ttl).to.be.within(1, s.rt.config.pageCacheSeconds * 1000);
    });

    it('keeps a long page gzipped once and sends those bytes to a client that takes gzip; every client decodes what the database renders', async () => {
      const { ws, channel, post } = await conversation();
      for (let i = 0; i < 12; i++) await post(`message ${i}: ${'a few words to make the page long enough to compress '.repeat(3)}`);
      const rendered = (await read(uncached.peer, ws.ownerKey, channel)).slice(4);
      expect(rendered.length).to.be.above(1024);
      // The first read keeps it, and is itself answered with the kept bytes.
      const url = `${s.url}/api/v1/channels/${channel}/messages?limit=${LIMIT}`;
      const first = await getRaw(url, ws.ownerKey, 'gzip');
      const kept = await s.rt.redis.hgetBuffer(pagesKey(s, channel), field());
      expect(kept?.subarray(0, 2).toString('hex'), 'kept as gzip').to.equal('1f8b');
      expect(first.encoding).to.equal('gzip');
      expect(first.body.equals(kept!)).to.equal(true);
      const cases: [string | undefined, string | undefined][] = [
        ['gzip', 'gzip'],
        ['gzip, deflate, br', 'gzip'],
        ['br;q=1, gzip;q=0.5', 'gzip'],
        ['gzip;q=0, br', 'br'],
        ['identity', undefined],
        ['*', 'gzip'],
        [undefined, undefined],
      ];
      for (const [acceptEncoding, encoding] of cases) {
        for (const server of [s, other.peer]) {
          const r = await getRaw(`${server.url}/api/v1/channels/${channel}/messages?limit=${LIMIT}`, ws.ownerKey, acceptEncoding);
          expect(r.status).to.equal(200);
          expect(r.encoding, `Accept-Encoding: ${acceptEncoding}`).to.equal(encoding);
          if (encoding === 'gzip') expect(r.body.equals(kept!), 'the kept bytes, not compressed again').to.equal(true);
          expect(decoded(r)).to.equal(rendered);
        }
      }
    });

    it("drops the page on every kind of change before the writer is answered: the writer's next read on another process sees it", async () => {
      const { ws, member, channel, post } = await conversation();
      const root = await post('root');
      const other1 = await post('to edit');
      const url = `/api/v1/channels/${channel}/messages`;
      const changes: [string, () => Promise<unknown>][] = [
        ['a post', () => post('new post')],
        ['a reply (the root shows its thread count)', () => post('reply', root.id)],
        ['an edit', async () => expectOk(await ws.owner.patch(`${url}/${other1.id}`, { content: 'edited' }))],
        ['a reaction', async () => expectOk(await member.client.post(`${url}/${root.id}/reactions`, { emoji: 'eyes' }), 201)],
        ['a reaction taken back', async () => expect((await member.client.request('DELETE', `${url}/${root.id}/reactions/eyes`)).status).to.equal(204)],
        ['a delete', async () => expect((await ws.owner.request('DELETE', `${url}/${other1.id}`)).status).to.equal(204)],
        ...(level === 3
          ? ([
              ['a pin', async () => expectOk(await member.client.post(`/api/v1/channels/${channel}/pins`, { message_id: root.id }), 201)],
              ['an unpin', async () => expect((await member.client.request('DELETE', `/api/v1/channels/${channel}/pins/${root.id}`)).status).to.equal(204)],
            ] as [string, () => Promise<unknown>][])
          : []),
      ];
      for (const [what, change] of changes) {
        // Kept on both processes' shared Redis, through the other process.
        const before = await read(other.peer, ws.ownerKey, channel);
        expect(await s.rt.redis.hget(pagesKey(s, channel), field()), `kept before ${what}`).to.be.a('string');
        await change();
        const after = await read(other.peer, ws.ownerKey, channel);
        expect(after, `${what}: the next read shows it`).to.not.equal(before);
        expect(after, `${what}: as the database renders it`).to.equal(await read(uncached.peer, ws.ownerKey, channel));
        expect(await read(s, member.key, channel), `${what}: the same for every reader`).to.equal(after);
      }
    });

    it('keeps thread pages too, dropped with the conversation; a deleted root takes its kept thread page with it', async () => {
      const { ws, channel, post } = await conversation();
      const root = await post('root');
      await post('first reply', root.id);
      const first = await read(s, ws.ownerKey, channel, root.id);
      expect(await s.rt.redis.hget(pagesKey(s, channel), field(root.id))).to.be.a('string');
      expect(await read(other.peer, ws.ownerKey, channel, root.id)).to.equal(first);
      await post('second reply', root.id);
      const second = await read(other.peer, ws.ownerKey, channel, root.id);
      expect(second).to.contain('second reply').and.equal(await read(uncached.peer, ws.ownerKey, channel, root.id));
      expect((await ws.owner.request('DELETE', `/api/v1/channels/${channel}/messages/${root.id}`)).status).to.equal(204);
      const gone = await read(other.peer, ws.ownerKey, channel, root.id);
      expect(gone).to.match(/^400 /).and.equal(await read(uncached.peer, ws.ownerKey, channel, root.id));
    });

    it('never stores a page read before a change committed (the change dropped the token it was read under)', async () => {
      const { ws, channel, post } = await conversation();
      await post('old');
      const key = { channelId: channel, threadId: null, limit: LIMIT };
      const miss = await s.rt.pages.get(key);
      expect(miss).to.have.property('token').that.is.a('string');
      const stale = await s.rt.pages.get({ ...key, limit: LIMIT + 1 }); // the same token, another field: still a miss
      expect(stale).to.deep.equal(miss);
      // A reader's page, read now ...
      const before = await read(uncached.peer, ws.ownerKey, channel);
      const page = JSON.parse(before.slice(4)) as { data: unknown[]; pagination: { next_cursor: string | null } };
      // ... a post commits (and drops the hash) before it stores it:
      await post('new');
      await s.rt.pages.fill(key, miss as { token: string }, listJson({ data: JSON.stringify(page.data), lastSeq: null, hasMore: false }));
      expect(await s.rt.redis.hget(pagesKey(s, channel), field())).to.equal(null);
      expect(await read(s, ws.ownerKey, channel)).to.contain('"new"').and.equal(await read(uncached.peer, ws.ownerKey, channel));
    });

    it('serves a kept page only to those who may read the conversation', async () => {
      const ws = await newWorkspace(s);
      const outsider = await ws.user();
      const secret = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('secret'), is_private: true }), 201).data.id as string;
      expectOk(await ws.owner.post(`/api/v1/channels/${secret}/messages`, { content: 'only members' }), 201);
      expect(await read(s, ws.ownerKey, secret)).to.match(/^200 /);
      expect(await s.rt.redis.hget(pagesKey(s, secret), field())).to.be.a('string');
      const refused = await read(s, outsider.key, secret);
      expect(refused).to.match(/^404 /).and.equal(await read(uncached.peer, outsider.key, secret));
      expect(refused).to.not.contain('only members');
    });
  });
}

describe('the page cache, beside its dependencies', function () {
  this.timeout(60_000);

  it('drops the pages of the conversations retention deleted from (retention writes no event)', async () => {
    const s = stack();
    const ws = await newWorkspace(s);
    const admin = await ws.user({ role: 'admin' });
    const channel = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('retained') }), 201).data.id as string;
    const old = expectOk(await ws.owner.post(`/api/v1/channels/${channel}/messages`, { content: 'long ago' }), 201).data.id as string;
    expectOk(await ws.owner.post(`/api/v1/channels/${channel}/messages`, { content: 'today' }), 201);
    expectOk(await admin.client.patch(`/api/v1/channels/${channel}`, { retention_days: 1 }));
    await s.rt.db('messages').where({ id: old }).update({ created_at: new Date(Date.now() - 3 * 86_400_000) });
    const url = `/api/v1/channels/${channel}/messages?limit=${LIMIT}`;
    expect((await ws.owner.get(url)).text).to.contain('long ago');
    expect(await s.rt.redis.hget(pagesKey(s, channel), `2::${LIMIT}`)).to.be.a('string');
    await runRetention(s.rt);
    const after = await ws.owner.get(url);
    expect(after.text).to.contain('today');
    expect(after.text).to.not.contain('long ago');
  });

  it('reads the database when Redis does not answer, and keeps nothing', async () => {
    const redis = createRedis('redis://127.0.0.1:1', 'page-cache-test', { commandTimeoutMs: 200 });
    redis.on('error', () => undefined);
    const cache = new PageCache(redis, { prefix: 'axidtest:nowhere:', ttlSeconds: 60, level: 2, log: createLogger('silent'), metrics: createMetrics() });
    try {
      const key = { channelId: '00000000-0000-4000-8000-000000000000', threadId: null, limit: LIMIT };
      expect(await cache.get(key)).to.deep.equal({ token: null });
      // An invalidation Redis does not take is tried again, and never fails the writer.
      await cache.invalidate([key.channelId]);
    } finally {
      cache.stop();
      redis.disconnect();
    }
  });

  it('keeps nothing with PAGE_CACHE_SECONDS=0', async () => {
    const redis = createRedis(stack().rt.config.redisUrl, 'page-cache-off');
    const cache = new PageCache(redis, { prefix: `${stack().rt.config.redisKeyPrefix}off:`, ttlSeconds: 0, level: 2, log: createLogger('silent'), metrics: createMetrics() });
    try {
      const key = { channelId: '00000000-0000-4000-8000-000000000001', threadId: null, limit: LIMIT };
      expect(await cache.get(key)).to.deep.equal({ token: null });
      expect(await redis.exists(`${stack().rt.config.redisKeyPrefix}off:pages:${key.channelId}`)).to.equal(0);
    } finally {
      redis.disconnect();
    }
  });
});
