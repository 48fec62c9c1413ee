// Event deliveries shared by worker processes (docs/bots.md, "Delivery"): two
// ROLES=worker processes read the sharded event bus as one consumer group and
// run the attempts from one queue. Over 1,000 events each is delivered once;
// with one worker SIGKILLed mid-run nothing is lost (its pending stream
// entries are claimed by the other, its running jobs retried), and a
// duplicate, if any, carries the same event id.
import { expect } from 'chai';
import { startStack, type Stack } from '../../services/stack.js';
import { createLogger } from '../../shared/logger.js';
import { Client, serverLevels } from '../support/client.js';
import { expectOk } from '../support/expect.js';
import { waitFor } from '../support/files.js';
import { FAST_DELIVERY, startReceiver, type Receiver } from '../support/receiver.js';
import { processEnv, startProcess, type RunningProcess } from '../support/stack-process.js';
import { newWorkspace, testEnv, uniqueName, type TestEnv } from '../support/stack.js';

// The receiver shares its event loop with the API stack taking the posts, so
// it may answer late: the default 10 s per attempt, and a retry window no
// busy machine reaches (a subscription disabled mid-run would drop events).
const SETTINGS = {
  ...FAST_DELIVERY,
  EVENT_SHARDS: '3',
  EVENT_DELIVERY_TIMEOUT_MS: '10000',
  EVENT_DELIVERY_RETRY_WINDOW_SECONDS: '3600',
  EVENT_DELIVERY_PER_SUBSCRIPTION: '8',
};

/** Posts `n` messages over the channels, a few at a time; returns their ids in order of posting. */
async function postMany(client: Client, channelIds: string[], n: number, tag: string, onPosted?: (count: number) => Promise<void>): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  const lane = async () => {
    while (next < n) {
      const i = next++;
      const res = await client.post(`/api/v1/channels/${channelIds[i % channelIds.length]}/messages`, { content: `${tag} ${i}` });
      ids.push(expectOk(res, 201).data.id);
      await onPosted?.(ids.length);
    }
  };
  await Promise.all(Array.from({ length: 8 }, lane));
  return ids;
}

/** The delivered count a worker process reports on /metrics. */
async function deliveredBy(p: RunningProcess): Promise<number> {
  const text = await (await fetch(`${p.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('axid_event_deliveries_total{outcome="delivered"}'));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

/** message id → the event ids it arrived under. */
function byMessage(r: Receiver, tag: string) {
  const out = new Map<string, Set<string>>();
  for (const d of r.deliveries) {
    const m = d.body.data.message;
    if (!String(m.content).startsWith(`${tag} `)) continue;
    const ids = out.get(m.id) ?? new Set<string>();
    ids.add(d.body.id);
    out.set(m.id, ids);
  }
  return out;
}

describe('event deliveries by two worker processes', function () {
  this.timeout(180_000);
  let env: TestEnv;
  let api: Stack;
  const workers: RunningProcess[] = [];
  let receiver: Receiver;

  before(async () => {
    env = testEnv({ ...SETTINGS, ROLES: 'api,gateway' });
    api = await startStack(env.config, createLogger(env.config.logLevel));
    serverLevels.set(api.url, '3');
    for (let i = 0; i < 2; i++) workers.push(await startProcess(processEnv(env, { ...SETTINGS, ROLES: 'worker', MIGRATE_ON_START: 'false', LOG_LEVEL: 'warn' })));
    receiver = await startReceiver();
  });
  after(async () => {
    for (const w of workers) await w.stop();
    await receiver?.close();
    serverLevels.delete(api.url);
    await api?.close();
    await env?.cleanup();
  });

  it('delivers each of 1,000 events once across the two, and loses none when one is SIGKILLed mid-run', async () => {
    const ws = await newWorkspace(api);
    const bot = await ws.user({ is_agent: true });
    const channels: string[] = [];
    for (let i = 0; i < 4; i++) {
      const c = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName(`load${i}`).slice(0, 60) }), 201).data;
      expectOk(await ws.owner.post(`/api/v1/channels/${c.id}/members`, { user_id: bot.id }), 201);
      channels.push(c.id);
    }
    expectOk(await bot.client.post('/api/v1/event-subscriptions', { url: receiver.url, events: ['message.created'] }), 201);

    // 1,000 events, both workers up: every one exactly once.
    const first = await postMany(ws.owner, channels, 1000, 'calm');
    await receiver.waitFor(1000, (d) => String(d.body.data.message.content).startsWith('calm '), 60_000);
    const calm = byMessage(receiver, 'calm');
    expect(calm.size).to.equal(1000);
    expect([...calm.keys()]).to.have.members(first);
    expect(receiver.deliveries.filter((d) => String(d.body.data.message.content).startsWith('calm ')).length).to.equal(1000);
    // Counted once each attempt is logged, just after the receiver answered.
    const counts = await waitFor(async () => {
      const c = await Promise.all(workers.map(deliveredBy));
      return c[0]! + c[1]! >= 1000 ? c : undefined;
    }, 'the workers to count 1,000 deliveries');
    expect(counts[0]! + counts[1]!).to.equal(1000);
    expect(counts[0], 'the first worker delivered some').to.be.greaterThan(0);
    expect(counts[1], 'the second worker delivered some').to.be.greaterThan(0);

    // 1,000 more; the first worker is killed once a third of them are in.
    let killed = false;
    const second = await postMany(ws.owner, channels, 1000, 'storm', async () => {
      if (killed) return;
      if (receiver.deliveries.filter((d) => String(d.body.data.message.content).startsWith('storm ')).length >= 300) {
        killed = true;
        workers[0]!.child.kill('SIGKILL');
      }
    });
    expect(killed, 'the worker was killed while events were flowing').to.equal(true);
    await waitForAll(receiver, second, 120_000);
    const storm = byMessage(receiver, 'storm');
    expect([...storm.keys()]).to.have.members(second);
    // Duplicates (an attempt cut short by the kill, sent again) only under the same event id.
    for (const [messageId, eventIds] of storm) expect(eventIds.size, messageId).to.equal(1);
  });
});

async function waitForAll(r: Receiver, messageIds: string[], timeoutMs: number) {
  const wanted = new Set(messageIds);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const seen = new Set(r.deliveries.map((d) => d.body.data.message.id as string).filter((id) => wanted.has(id)));
    if (seen.size === wanted.size) return;
    if (Date.now() > deadline) throw new Error(`${seen.size}/${wanted.size} events delivered after ${timeoutMs} ms`);
    await r.waitFor(r.deliveries.length + 1, undefined, Math.max(1, deadline - Date.now())).catch(() => undefined);
  }
}
