import { expect } from 'chai';
import { Client } from '../support/client.js';
import { createChannel, postMessage } from '../support/conversations.js';
import { expectOk } from '../support/expect.js';
import { uploadFile, waitFor } from '../support/files.js';
import { processEnv, startProcess, type RunningProcess } from '../support/stack-process.js';
import { openRaw } from '../support/sse.js';
import { testEnv } from '../support/stack.js';

/** The series a Prometheus scrape of each role must show after some traffic (issue 7). */
const SERIES = {
  api: [
    'axid_http_requests_total{method="POST",route="/api/v1/channels/{channel_id}/messages",status="201"}',
    'axid_http_request_duration_seconds_bucket',
    'axid_events_published_total',
    'axid_rate_limit_rejections_total',
  ],
  gateway: ['axid_sse_connections', 'axid_events_received_total', 'axid_events_delivered_total', 'axid_events_dropped_total', 'axid_stream_lag_ms'],
  worker: ['axid_job_duration_seconds_bucket{le="60",job="file.postprocess",outcome="completed"}', 'axid_queue_depth{state="waiting"}'],
};

describe('/metrics of each role', function () {
  this.timeout(90_000);
  const env = testEnv();
  const key = 'm'.repeat(40);
  const roles: Record<string, RunningProcess> = {};

  before(async () => {
    const common = processEnv(env, { BOOTSTRAP_ADMIN_KEY: key, LOG_LEVEL: 'warn' });
    roles.api = await startProcess({ ...common, ROLES: 'api' });
    roles.gateway = await startProcess({ ...common, ROLES: 'gateway' });
    // Both embedded S3 servers keep their files in the same DATA_DIR: the worker reads what the API stored.
    roles.worker = await startProcess({ ...common, ROLES: 'worker' });
  });

  after(async () => {
    await Promise.all(Object.values(roles).map((p) => p.stop()));
    await env.cleanup();
  });

  it('exposes requests, events, streams, jobs and queue depth after traffic', async () => {
    const owner = new Client(roles.api!.url, key);
    const channel = await createChannel(owner);
    const stream = await openRaw(roles.gateway!.url, key);
    await postMessage(owner, channel.id, 'metrics please');
    await stream.waitFor((f) => f.event === 'message.created');
    const file = await uploadFile(roles.api!.url, { key, size: 1024, name: 'm.bin' });
    expect(file.status).to.equal(201);
    await waitFor(async () => (expectOk(await owner.get(`/api/v1/files/${file.body.data.id}`)).data.status === 'ready' ? true : null), 'file ready');

    for (const [role, series] of Object.entries(SERIES)) {
      const res = await fetch(`${roles[role]!.url}/metrics`);
      expect(res.status, role).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/text\/plain/);
      const text = await res.text();
      for (const s of series) expect(text, `${role} lacks ${s}`).to.include(s);
    }
    stream.close();
  });
});
