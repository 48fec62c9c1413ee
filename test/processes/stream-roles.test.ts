import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Client } from '../support/client.js';
import { openRaw, type RawStream } from '../support/sse.js';
import { processEnv, startProcess, type RunningProcess } from '../support/stack-process.js';
import { testEnv, uniqueName, type TestEnv } from '../support/stack.js';

describe('GET /api/v1/stream with separate api and gateway processes', function () {
  this.timeout(120_000);
  const key = randomBytes(32).toString('base64url');
  let env: TestEnv;
  const procs: RunningProcess[] = [];
  const streams: RawStream[] = [];

  before(async () => {
    env = testEnv();
    const base = processEnv(env, { BOOTSTRAP_ADMIN_KEY: key, RATE_LIMIT_POINTS: '100000', LOG_LEVEL: 'warn' });
    // The first one creates the database and the workspace; the rest start together.
    procs.push(await startProcess({ ...base, ROLES: 'api' }));
    procs.push(
      ...(await Promise.all([
        startProcess({ ...base, ROLES: 'api' }),
        startProcess({ ...base, ROLES: 'gateway' }),
        startProcess({ ...base, ROLES: 'gateway' }),
      ])),
    );
  });

  after(async () => {
    for (const s of streams) s.close();
    await Promise.all(procs.map((p) => p.stop()));
    await env?.cleanup();
  });

  it('gives a client on each gateway the same events, whichever API process committed them', async () => {
    const [api1, api2, gw1, gw2] = procs as [RunningProcess, RunningProcess, RunningProcess, RunningProcess];
    // A gateway-only process serves no API routes. Plain fetch: the response
    // check (test/support/hooks.ts) holds the API's answers to its document.
    expect((await fetch(`${gw1.url}/api/v1/users/me`, { headers: { authorization: `Bearer ${key}` } })).status).to.equal(404);
    for (const gw of [gw1, gw2]) streams.push(await openRaw(gw.url, key));
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const api = new Client((i % 2 ? api2 : api1).url, key);
      const res = await api.post('/api/v1/users', { name: uniqueName('multi') });
      expect(res.status, res.text).to.equal(201);
      ids.push(res.body.data.id);
    }
    for (const s of streams) {
      const got = await s.waitForCount((f) => f.event === 'user.created', ids.length, 20_000);
      expect(got.map((f) => f.data.user.id)).to.deep.equal(ids);
      expect(s.frames[0]?.event).to.equal('init');
    }
  });

  it('publishes each change exactly once while both API processes write at once', async () => {
    const [api1, api2] = procs as [RunningProcess, RunningProcess];
    // One API process holds the relay and publishes its own commits from
    // memory; the other's are read back from the outbox. Neither path may repeat the other.
    const burst = await Promise.all(
      Array.from({ length: 40 }, (_, i) => new Client((i % 2 ? api2 : api1).url, key).post('/api/v1/users', { name: uniqueName('burst') })),
    );
    for (const res of burst) expect(res.status, res.text).to.equal(201);
    const ids = new Set(burst.map((res) => res.body.data.id as string));
    for (const s of streams) {
      await s.waitForCount((f) => f.event === 'user.created' && ids.has(f.data.user.id), ids.size, 20_000);
      const seen = s.frames.filter((f) => f.event === 'user.created' && ids.has(f.data.user.id)).map((f) => f.data.user.id);
      expect(seen).to.have.lengthOf(ids.size);
      expect(new Set(seen).size).to.equal(ids.size);
    }
  });

  it('refuses a new stream for a key revoked through an API process, though the gateway had it cached', async () => {
    const [api1, , gw1] = procs as [RunningProcess, RunningProcess, RunningProcess];
    const created = (await new Client(api1.url, key).post('/api/v1/api-keys', { name: 'gw-cache' })).body.data;
    streams.push(await openRaw(gw1.url, created.key)); // the gateway has now cached this key
    expect((await new Client(api1.url, key).delete(`/api/v1/api-keys/${created.id}`)).status).to.equal(204);
    const res = await fetch(`${gw1.url}/api/v1/stream`, { headers: { authorization: `Bearer ${created.key}` } });
    expect(res.status).to.equal(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('unauthorized');
  });

  it('ends open streams cleanly and exits promptly on SIGTERM', async () => {
    const gw = await startProcess(processEnv(env, { ROLES: 'gateway', LOG_LEVEL: 'warn' }));
    const s = await openRaw(gw.url, key);
    const started = Date.now();
    const stopped = gw.stop();
    await s.ended;
    const endedAfter = Date.now() - started;
    await stopped;
    if (process.env.DEBUG_STOP) console.log({ endedAfter, exitedAfter: Date.now() - started });
    expect(endedAfter).to.be.below(2_000);
    expect(Date.now() - started).to.be.below(8_000);
    expect(s.res.complete, 'the chunked response was terminated').to.equal(true);
    expect(s.text().endsWith('\n\n')).to.equal(true);
  });
});
