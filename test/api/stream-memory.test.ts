// What an open stream keeps (docs/realtime.md, "Memory per stream"): not
// Koa's context of its request, and nothing once it ended.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import v8 from 'node:v8';
import vm from 'node:vm';
import { expect } from 'chai';
import type { Next } from 'koa';
import { createApp } from '../../services/app.js';
import { STREAM_PATH, createGateway } from '../../services/gateway/gateway.js';
import type { AppContext } from '../../shared/http/context.js';
import { waitFor } from '../support/files.js';
import { openRaw } from '../support/sse.js';
import { newWorkspace, stack } from '../support/stack.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/** Whether the object behind `ref` was collected (a WeakRef is cleared only after the job that read it). */
async function collected(ref: WeakRef<object>): Promise<boolean> {
  for (let i = 0; i < 5; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    if (ref.deref() === undefined) return true;
  }
  return false;
}

describe('GET /api/v1/stream: what an open stream keeps', function () {
  this.timeout(30_000);

  it('lets go of the Koa context of its request once open, and of everything once it ends', async () => {
    const rt = stack().rt;
    const gateway = createGateway(rt, { databaseUrl: rt.config.databaseUrl, redisUrl: rt.config.redisUrl });
    await gateway.ready();
    const app = createApp(rt, { gateway });
    let context: WeakRef<object> | null = null;
    app.middleware.unshift(async (ctx: AppContext, next: Next) => {
      if (ctx.path === STREAM_PATH) context = new WeakRef(ctx);
      await next();
    });
    const server = http.createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const ws = await newWorkspace();
      const st = await openRaw(url, ws.ownerKey);
      expect(st.status).to.equal(200);
      expect(gateway.hub.size).to.equal(1);
      expect(await collected(context!), 'the Koa context of an open stream').to.equal(true);

      // Still delivered to after its context went.
      const channel = await ws.owner.post('/api/v1/channels', { name: 'kept' });
      expect(channel.status, channel.text).to.equal(201);
      await st.waitFor((f) => f.event === 'channel.created');

      st.close();
      await waitFor(async () => gateway.hub.size === 0 || undefined, 'the ended stream out of the index');
    } finally {
      await gateway.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
