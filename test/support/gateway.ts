// A gateway on its own port over the shared stack's runtime, for options the
// stack does not expose (short keep-alive, a small queue) and for close().
// The app is the one every process builds (services/app.ts), gateway only.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '../../services/app.js';
import { createGateway, type GatewayOptions } from '../../services/gateway/gateway.js';
import type { Stack } from '../../services/stack.js';
import { serverLevels } from './client.js';
import { stack } from './stack.js';

export async function startGateway(o: Partial<GatewayOptions> = {}, s: Stack = stack()) {
  const rt = s.rt;
  const gateway = createGateway(rt, { databaseUrl: rt.config.databaseUrl, redisUrl: rt.config.redisUrl, ...o });
  await gateway.ready();
  const app = createApp(rt, { gateway });
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  if (rt.config.featureLevel !== 2) serverLevels.set(url, String(rt.config.featureLevel));
  return {
    url,
    gateway,
    async close() {
      serverLevels.delete(url);
      await gateway.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
