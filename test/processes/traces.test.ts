// Traces (contract §16; docs/operations.md, "Traces"): the api, gateway and
// worker as three processes exporting OTLP/JSON to a receiver of the test's.
// One post through a compatible hook makes one trace: the request, the
// relay's publish, the gateway's delivery, the event subscription's POST and
// the worker's rendering of the attachments, parent to child across the
// processes (the context rides the database rows, the stream entries and the
// jobs), and nothing secret in any span.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Client, serverLevels } from '../support/client.js';
import { expectOk } from '../support/expect.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { FAST_DELIVERY, startReceiver, type Receiver } from '../support/receiver.js';
import { openRaw, type RawStream } from '../support/sse.js';
import { processEnv, startProcess, type RunningProcess } from '../support/stack-process.js';
import { testEnv, type TestEnv } from '../support/stack.js';

/** The chain of spans from `span` up to its trace's root (the spans received). */
function ancestry(spans: ReceivedSpan[], span: ReceivedSpan): ReceivedSpan[] {
  const byId = new Map(spans.filter((s) => s.traceId === span.traceId).map((s) => [s.spanId, s]));
  const chain: ReceivedSpan[] = [];
  for (let at: ReceivedSpan | undefined = byId.get(span.parentSpanId); at; at = byId.get(at.parentSpanId)) chain.push(at);
  return chain;
}

describe('traces (OTEL_EXPORTER_OTLP_ENDPOINT set)', function () {
  this.timeout(180_000);
  let otlp: OtlpReceiver;
  let bot: Receiver;
  let env: TestEnv;
  const processes: RunningProcess[] = [];
  let stream: RawStream | undefined;

  before(async function () {
    otlp = await startOtlpReceiver();
    bot = await startReceiver();
    env = testEnv(FAST_DELIVERY);
    const base = processEnv(env, {
      ...FAST_DELIVERY,
      BOOTSTRAP_ADMIN_KEY: env.config.bootstrapAdminKey!,
      LOG_LEVEL: 'warn',
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '200',
    });
    // The api migrates first; then the other roles, each a process of its own.
    processes.push(await startProcess({ ...base, ROLES: 'api', OTEL_SERVICE_NAME: 'axid-api' }));
    processes.push(
      ...(await Promise.all([
        startProcess({ ...base, ROLES: 'gateway', OTEL_SERVICE_NAME: 'axid-gateway' }),
        startProcess({ ...base, ROLES: 'worker', OTEL_SERVICE_NAME: 'axid-worker' }),
      ])),
    );
    for (const p of processes) serverLevels.set(p.url, '3');
  });

  after(async function () {
    stream?.close();
    await Promise.all(processes.map((p) => p.stop()));
    await bot?.close();
    await otlp?.close();
    await env?.cleanup();
  });

  it('joins the request, the relay, the gateway, the subscription POST and the worker job of one compatible-hook post in one trace, with nothing secret in it', async function () {
    const [api, gateway] = processes as [RunningProcess, RunningProcess, RunningProcess];
    const key = env.config.bootstrapAdminKey!;
    const owner = new Client(api.url, key);
    const channel = expectOk(await owner.post('/api/v1/channels', { name: `traces-${randomBytes(3).toString('hex')}` }), 201).data;
    expectOk(await owner.post('/api/v1/event-subscriptions', { url: bot.url, events: ['message.created'] }), 201);
    const hook = expectOk(await owner.post('/api/v1/webhooks/incoming', { channel_id: channel.id, name: 'CI' }), 201).data;
    stream = await openRaw(gateway.url, key);

    const text = `deploy finished ${randomBytes(6).toString('hex')}`;
    const attachmentText = `attachment body ${randomBytes(6).toString('hex')}`;
    const res = await new Client(api.url).post(`/hooks/compat/${hook.id}`, { text, attachments: [{ fallback: 'deploy', text: attachmentText, color: 'good' }] });
    expect(res.status).to.equal(200);

    // Delivered on the stream (posted, then rendered by the worker) and to the subscription.
    await stream.waitFor((f) => f.event === 'message.updated' && JSON.stringify(f.data).includes(attachmentText), 40_000);
    const [delivery] = await bot.waitFor(1, (d) => d.body?.type === 'message.created', 40_000);

    const isRequest = (s: ReceivedSpan) => s.service === 'axid-api' && s.name === 'POST /hooks/compat/:webhook_id';
    const named = (spans: ReceivedSpan[], traceId: string, name: string) => spans.find((s) => s.traceId === traceId && s.name === name);
    let request!: ReceivedSpan;
    await otlp.waitFor((spans) => {
      const found = spans.find(isRequest);
      if (!found) return false;
      request = found;
      return ['relay publish message.created', 'gateway deliver message.created', 'job webhook.render', 'event delivery message.created'].every((name) =>
        named(spans, found.traceId, name),
      );
    });
    const spans = otlp.spans;
    const trace = request.traceId;
    const relay = named(spans, trace, 'relay publish message.created')!;
    const gatewayDelivery = named(spans, trace, 'gateway deliver message.created')!;
    const job = named(spans, trace, 'job webhook.render')!;
    const subscriptionDelivery = named(spans, trace, 'event delivery message.created')!;

    // Parent to child: the request (api) → the relay's publish (the elected relay: api or worker) →
    // the gateway's delivery (gateway) and the subscription's delivery (worker); the request → the job (worker).
    expect(ancestry(spans, relay)).to.deep.include(request);
    expect(gatewayDelivery.parentSpanId).to.equal(relay.spanId);
    expect(gatewayDelivery.service).to.equal('axid-gateway');
    expect(subscriptionDelivery.parentSpanId).to.equal(relay.spanId);
    expect(subscriptionDelivery.service).to.equal('axid-worker');
    expect(ancestry(spans, job)).to.deep.include(request);
    expect(job.service).to.equal('axid-worker');
    // The job's own work is in the trace too: its database statements, and the message.updated it publishes.
    await otlp.waitFor((all) => all.some((s) => s.traceId === trace && s.name === 'relay publish message.updated'));
    expect(spans.some((s) => s.parentSpanId === job.spanId && s.attributes['db.system.name'] === 'postgresql')).to.equal(true);
    // The POST to the subscription is the delivery span's child, and carries the trace to the receiver.
    expect(delivery!.headers.traceparent).to.match(new RegExp(`^00-${trace}-[0-9a-f]{16}-0[01]$`));

    // Named by the route template; no path, text, key or hook id anywhere in what was exported.
    expect(request.attributes['http.route']).to.equal('/hooks/compat/:webhook_id');
    const exported = otlp.bodies.join('\n');
    for (const secret of [text, attachmentText, key, hook.id as string]) expect(exported).not.to.include(secret);
  });

  it('carries the trace of every way a message is written: posts that arrive together (the batch), a reply and a streamed reply (an outbox row)', async function () {
    const [api] = processes as [RunningProcess, RunningProcess, RunningProcess];
    const owner = new Client(api.url, env.config.bootstrapAdminKey!);
    const channel = expectOk(await owner.post('/api/v1/channels', { name: `shapes-${randomBytes(3).toString('hex')}` }), 201).data;
    const base = `/api/v1/channels/${channel.id}/messages`;
    // Top-level posts outside a transaction go through the post batch (row-batch.ts): twenty at once share
    // statements (axid_insert_message_…_batch_traced in the runs so far), each row with its own trace context.
    const together = Array.from({ length: 20 }, (_, i) => `post ${i}`);
    const [root] = await Promise.all(together.map(async (content) => expectOk(await owner.post(base, { content }), 201).data));
    expectOk(await owner.post(base, { content: 'reply', thread_id: root.id }), 201);
    expectOk(await owner.post(base, { content: 'thinking', streaming: true }), 201);

    const route = 'POST /api/v1/channels/:channel_id/messages';
    // Each of the requests (the only ones on this route) is the ancestor of the relay's publish of its
    // message.created, whose child is the gateway's delivery.
    const traced = (spans: ReceivedSpan[]) =>
      spans
        .filter((s) => s.service === 'axid-api' && s.name === route)
        .filter((request) =>
          spans.some(
            (p) =>
              p.name === 'relay publish message.created' &&
              ancestry(spans, p).includes(request) &&
              spans.some((g) => g.name === 'gateway deliver message.created' && g.parentSpanId === p.spanId),
          ),
        );
    await otlp.waitFor((spans) => traced(spans).length === together.length + 2);
  });
});
