// Presence (level 3, contract §9; services/gateway/presence.ts) across two
// gateway processes: first open and last close announce, a second tab does
// not, a killed gateway's users go offline once its heartbeats expire.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Client } from '../support/client.js';
import { openRaw, type Frame, type RawStream } from '../support/sse.js';
import { processEnv, startProcess, type RunningProcess } from '../support/stack-process.js';
import { testEnv, uniqueName, type TestEnv } from '../support/stack.js';

const presenceOf = (userId: string, status: string) => (f: Frame) => f.event === 'presence.updated' && f.data.user_id === userId && f.data.status === status;

describe('presence across gateway processes (level 3)', function () {
  this.timeout(120_000);
  const ownerKey = randomBytes(32).toString('base64url');
  let env: TestEnv;
  let api: RunningProcess;
  let gw1: RunningProcess;
  let gw2: RunningProcess;
  const streams: RawStream[] = [];
  const open = async (url: string, key: string) => {
    const s = await openRaw(url, key);
    streams.push(s);
    return s;
  };

  before(async () => {
    env = testEnv();
    // A heartbeat that expires after 3 s (PRESENCE_TTL_SECONDS): a dead gateway is noticed within 4 s.
    const base = processEnv(env, { BOOTSTRAP_ADMIN_KEY: ownerKey, FEATURE_LEVEL: '3', PRESENCE_TTL_SECONDS: '3', RATE_LIMIT_POINTS: '100000', LOG_LEVEL: 'warn' });
    api = await startProcess({ ...base, ROLES: 'api,worker' });
    [gw1, gw2] = await Promise.all([startProcess({ ...base, ROLES: 'gateway' }), startProcess({ ...base, ROLES: 'gateway' })]);
  });

  after(async () => {
    for (const s of streams) s.close();
    await Promise.all([api, gw1, gw2].map((p) => p?.stop()));
    await env?.cleanup();
  });

  async function user() {
    const res = await new Client(api.url, ownerKey).post('/api/v1/users', { name: uniqueName('presence') });
    expect(res.status, res.text).to.equal(201);
    return { id: res.body.data.id as string, key: res.body.data.api_key as string };
  }

  it('announces a first open and a last close once, not a second tab; init.presence lists who is online anywhere', async () => {
    const owner = await open(gw2.url, ownerKey);
    const ownerId = owner.frames[0]!.data.user.id as string;
    const u1 = await user();
    const u3 = await user();

    const tab1 = await open(gw1.url, u1.key);
    expect(tab1.frames[0]!.data.presence).to.deep.equal({ [ownerId]: 'online', [u1.id]: 'online' });
    await owner.waitFor(presenceOf(u1.id, 'online'));

    // A second tab, on the other gateway: no announcement (u3's comes after where it would be).
    const tab2 = await open(gw2.url, u1.key);
    expect(tab2.frames[0]!.data.presence).to.include({ [u1.id]: 'online' });
    await open(gw2.url, u3.key);
    await owner.waitFor(presenceOf(u3.id, 'online'));
    expect(owner.frames.filter(presenceOf(u1.id, 'online'))).to.have.length(1);

    // Closing one tab announces nothing; closing the last one announces offline, once.
    tab1.close();
    tab2.close();
    await owner.waitFor(presenceOf(u1.id, 'offline'), 15_000);
    expect(owner.frames.filter((f) => f.event === 'presence.updated' && f.data.user_id === u1.id).map((f) => f.data.status)).to.deep.equal(['online', 'offline']);
    const later = await open(gw1.url, u3.key);
    expect(later.frames[0]!.data.presence).to.not.have.property(u1.id);
  });

  it('takes the users of a gateway killed with SIGKILL offline once its heartbeats expire', async () => {
    const owner = await open(gw2.url, ownerKey);
    const u = await user();
    await open(gw1.url, u.key);
    await owner.waitFor(presenceOf(u.id, 'online'));
    gw1.child.kill('SIGKILL');
    // Within 60 s (contract §9); with PRESENCE_TTL_SECONDS=3, about 4 s (docs/realtime.md).
    await owner.waitFor(presenceOf(u.id, 'offline'), 60_000);
  });
});
