// A real HTTP receiver for event subscription tests, on loopback: it answers
// the url_verification challenge, records every delivery (raw body and
// headers) and every connection, and answers deliveries as the test says.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A level-3 stack's settings for delivery tests (docs/bots.md, "Testing"):
 * receivers on loopback allowed, retries after 100, 200, 400, 400 ms, a 3 s
 * retry window, 1.5 s per attempt, two attempts at once per subscription.
 */
export const FAST_DELIVERY = {
  FEATURE_LEVEL: '3',
  EVENT_SUBSCRIPTION_ALLOW_PRIVATE: 'true',
  EVENT_DELIVERY_TIMEOUT_MS: '1500',
  EVENT_DELIVERY_RETRY_BASE_MS: '100',
  EVENT_DELIVERY_RETRY_MAX_MS: '400',
  EVENT_DELIVERY_RETRY_WINDOW_SECONDS: '3',
  EVENT_DELIVERY_PER_SUBSCRIPTION: '2',
  EVENT_DELIVERY_CLAIM_IDLE_MS: '2000',
};

export interface Delivery {
  headers: http.IncomingHttpHeaders;
  raw: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  at: number;
}

/** How to answer a delivery: a status, or 'hang' (never answer until closed). */
export type Answer = number | 'hang' | { status: number; headers?: Record<string, string>; body?: string };

export interface Receiver {
  url: string;
  port: number;
  deliveries: Delivery[];
  /** TCP connections accepted (a refused address must leave this at 0). */
  connections: number;
  /** Requests open right now (hanging ones included) and the most seen at once. */
  open: number;
  maxOpen: number;
  /** Resolves once `n` deliveries matching `pred` arrived. */
  waitFor(n: number, pred?: (d: Delivery) => boolean, timeoutMs?: number): Promise<Delivery[]>;
  close(): Promise<void>;
}

export async function startReceiver(
  o: { answer?: (d: Delivery) => Answer; challenge?: (challenge: string) => { status: number; body: string; headers?: Record<string, string> }; host?: string } = {},
): Promise<Receiver> {
  const waiters = new Set<() => void>();
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: { type?: string; challenge?: string } | undefined;
      try {
        body = JSON.parse(raw);
      } catch {
        body = undefined;
      }
      if (body?.type === 'url_verification') {
        const a = o.challenge ? o.challenge(String(body.challenge)) : { status: 200, body: String(body.challenge) };
        res.writeHead(a.status, { 'content-type': 'text/plain', ...a.headers });
        res.end(a.body);
        return;
      }
      const delivery: Delivery = { headers: req.headers, raw, body, at: Date.now() };
      r.deliveries.push(delivery);
      for (const wake of [...waiters]) wake();
      const answer = o.answer ? o.answer(delivery) : 200;
      r.open++;
      r.maxOpen = Math.max(r.maxOpen, r.open);
      res.once('close', () => r.open--);
      if (answer === 'hang') {
        hanging.add(res);
        return;
      }
      const a = typeof answer === 'number' ? { status: answer } : answer;
      res.writeHead(a.status, a.headers);
      res.end(a.body ?? '');
    });
  });
  server.on('connection', () => r.connections++);
  await new Promise<void>((resolve) => server.listen(0, o.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const host = (o.host ?? '127.0.0.1').includes(':') ? `[${o.host}]` : (o.host ?? '127.0.0.1');
  const r: Receiver = {
    url: `http://${host}:${port}/events`,
    port,
    deliveries: [],
    connections: 0,
    open: 0,
    maxOpen: 0,
    waitFor(n, pred = () => true, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = r.deliveries.filter(pred);
          if (found.length < n) return false;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out with ${r.deliveries.filter(pred).length}/${n} deliveries (of ${r.deliveries.length})`));
        }, timeoutMs);
        if (!check()) waiters.add(check);
      });
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return r;
}
