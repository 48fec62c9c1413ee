// CORS_ORIGINS: browsers on the listed origins may call the API and read the
// stream (shared/http/cors.ts); the snippet of docs/realtime.md, taken from
// the file, reads the stream in Chromium from another origin.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError, loadConfig } from '../../shared/config.js';
import { launchChromium, type Browser } from '../support/browser.js';
import { Client } from '../support/client.js';
import { codeBlocks } from '../support/markdown.js';
import { separateStack } from '../support/separate-stack.js';
import { newWorkspace, stack, type TestWorkspace } from '../support/stack.js';

const LISTED = 'https://app.example.com';
const NOT_LISTED = 'https://evil.example.com';
const RATE_LIMIT_POINTS = 20;

interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One request through node:http, which sends Origin as given (fetch would not). */
function request(baseUrl: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${baseUrl}${path}`, { method, headers, agent: false }, (res) => {
      const isStream = (res.headers['content-type'] ?? '').startsWith('text/event-stream');
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        // A stream never ends by itself: its headers and first frame are enough.
        if (isStream && text.includes('\n\n')) res.destroy();
      });
      res.on('close', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      res.on('error', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const list = (value: string | string[] | undefined) =>
  String(value ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);

function expectCorsFor(answer: RawAnswer, origin: string) {
  expect(answer.headers['access-control-allow-origin'], JSON.stringify(answer.headers)).to.equal(origin);
  expect(answer.headers['access-control-allow-credentials']).to.equal(undefined);
  expect(list(answer.headers.vary)).to.include('origin');
}

function expectExposed(answer: RawAnswer) {
  expect(list(answer.headers['access-control-expose-headers'])).to.include.members([
    'x-ratelimit-limit',
    'x-ratelimit-remaining',
    'x-ratelimit-reset',
    'retry-after',
    'x-service-feature-level',
    'x-request-id',
  ]);
}

/** What the page holds: the doc's function and what it received. */
interface PageGlobals {
  readAxidStream(baseUrl: string, apiKey: string, onEvent: (type: string, data: PageEvent) => void): Promise<void>;
  received: { type: string; data: PageEvent }[];
  streamError?: string;
}
interface PageEvent {
  type: string;
  message?: { id: string; metadata: unknown };
}

function expectNoCors(answer: RawAnswer) {
  const cors = Object.keys(answer.headers).filter((h) => h.startsWith('access-control-'));
  expect(cors, JSON.stringify(answer.headers)).to.deep.equal([]);
}

describe('CORS_ORIGINS', function () {
  this.timeout(60_000);

  // A tiny static server: the page's origin, another port than Axid's.
  let pages: http.Server;
  let pageOrigin: string;
  let s: Awaited<ReturnType<typeof separateStack>>;
  let ws: TestWorkspace;

  before(async () => {
    pages = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><title>another origin</title><p>a page on another origin</p>');
    });
    await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
    pageOrigin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
    s = await separateStack({ CORS_ORIGINS: `${LISTED}, ${pageOrigin}`, RATE_LIMIT_POINTS: String(RATE_LIMIT_POINTS) });
    ws = await newWorkspace(s.stack);
  });

  after(async () => {
    await s?.stop();
    await new Promise<void>((resolve) => (pages ? pages.close(() => resolve()) : resolve()));
  });

  describe('through HTTP', () => {
    it('answers a preflight from a listed origin with 204 and what the browser may send', async () => {
      for (const path of ['/api/v1/channels', '/api/v1/stream', '/hooks/anything']) {
        const answer = await request(s.stack.url, 'OPTIONS', path, {
          Origin: LISTED,
          'Access-Control-Request-Method': 'POST',
          'Access-Control-Request-Headers': 'authorization, content-type, idempotency-key',
        });
        expect(answer.status, path).to.equal(204);
        expectCorsFor(answer, LISTED);
        expect(list(answer.headers['access-control-allow-methods'])).to.include.members(['get', 'post', 'patch', 'put', 'delete']);
        expect(list(answer.headers['access-control-allow-headers'])).to.include.members(['authorization', 'content-type', 'idempotency-key', 'last-event-id']);
        expect(answer.headers['access-control-max-age']).to.equal('7200');
        expect(answer.body).to.equal('');
      }
    });

    it('does not count preflights against the rate limit', async () => {
      const key = `Bearer ${randomBytes(24).toString('base64url')}`;
      for (let i = 0; i < RATE_LIMIT_POINTS + 2; i++) {
        const answer = await request(s.stack.url, 'OPTIONS', '/api/v1/users/me', { Origin: LISTED, Authorization: key, 'Access-Control-Request-Method': 'GET' });
        expect(answer.status).to.equal(204);
      }
    });

    it('gives an origin not listed no CORS headers, on a preflight or a request', async () => {
      const preflight = await request(s.stack.url, 'OPTIONS', '/api/v1/channels', { Origin: NOT_LISTED, 'Access-Control-Request-Method': 'POST' });
      expectNoCors(preflight);
      expect(preflight.status).to.equal(404);
      const answer = await request(s.stack.url, 'GET', '/api/v1/users/me', { Origin: NOT_LISTED, Authorization: `Bearer ${ws.ownerKey}` });
      expect(answer.status).to.equal(200);
      expectNoCors(answer);
      // A listed origin differing only in case or port is another origin.
      const lookalike = await request(s.stack.url, 'GET', '/api/v1/users/me', { Origin: `${LISTED}:8443`, Authorization: `Bearer ${ws.ownerKey}` });
      expectNoCors(lookalike);
    });

    it('marks answers to a listed origin as readable and exposes the service headers', async () => {
      const answer = await request(s.stack.url, 'GET', '/api/v1/users/me', { Origin: LISTED, Authorization: `Bearer ${ws.ownerKey}` });
      expect(answer.status).to.equal(200);
      expectCorsFor(answer, LISTED);
      expectExposed(answer);
      expect(answer.headers['x-request-id']).to.be.a('string');
    });

    it('keeps the CORS headers on error answers (401, 404, 400, 429)', async () => {
      const unauthorized = await request(s.stack.url, 'GET', '/api/v1/users/me', { Origin: LISTED });
      expect(unauthorized.status).to.equal(401);
      expect(JSON.parse(unauthorized.body).error.code).to.equal('unauthorized');
      expectCorsFor(unauthorized, LISTED);
      expectExposed(unauthorized);

      const missing = await request(s.stack.url, 'GET', '/api/v1/nothing-here', { Origin: LISTED, Authorization: `Bearer ${ws.ownerKey}` });
      expect(missing.status).to.equal(404);
      expectCorsFor(missing, LISTED);

      const invalid = await request(s.stack.url, 'POST', '/api/v1/channels', { Origin: LISTED, Authorization: `Bearer ${ws.ownerKey}`, 'content-type': 'application/json' }, '{"name": ');
      expect(invalid.status).to.equal(400);
      expectCorsFor(invalid, LISTED);

      // A key of its own: made-up keys count against the client address (shared/http/rate-limit.ts),
      // which the stream's 401 below needs left.
      const key = `Bearer ${(await ws.user()).key}`;
      let limited: RawAnswer | null = null;
      for (let i = 0; i <= RATE_LIMIT_POINTS && !limited; i++) {
        const answer = await request(s.stack.url, 'GET', '/api/v1/users/me', { Origin: LISTED, Authorization: key });
        if (answer.status === 429) limited = answer;
      }
      expect(limited, 'a 429 within the limit plus one').to.not.equal(null);
      expectCorsFor(limited!, LISTED);
      expectExposed(limited!);
      expect(Number(limited!.headers['retry-after'])).to.be.greaterThan(0);
    });

    it('marks the stream readable too (api and gateway on one port), and its 401', async () => {
      const opened = await request(s.stack.url, 'GET', '/api/v1/stream', { Origin: LISTED, Authorization: `Bearer ${ws.ownerKey}` });
      expect(opened.status).to.equal(200);
      expect(opened.headers['content-type']).to.match(/^text\/event-stream/);
      expect(opened.body).to.match(/^event: init\n/);
      expectCorsFor(opened, LISTED);
      expectExposed(opened);

      const refused = await request(s.stack.url, 'GET', '/api/v1/stream', { Origin: LISTED, Authorization: 'Bearer nope' });
      expect(refused.status).to.equal(401);
      expectCorsFor(refused, LISTED);
    });

    it('marks the stream of a gateway-only process (ROLES=gateway) readable too', async () => {
      const gateway = await separateStack({ ROLES: 'gateway', CORS_ORIGINS: LISTED });
      try {
        const own = await newWorkspace(gateway.stack);
        const preflight = await request(gateway.stack.url, 'OPTIONS', '/api/v1/stream', { Origin: LISTED, 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'authorization' });
        expect(preflight.status).to.equal(204);
        expectCorsFor(preflight, LISTED);
        const opened = await request(gateway.stack.url, 'GET', '/api/v1/stream', { Origin: LISTED, Authorization: `Bearer ${own.ownerKey}` });
        expect(opened.status).to.equal(200);
        expectCorsFor(opened, LISTED);
        const elsewhere = await request(gateway.stack.url, 'GET', '/api/v1/stream', { Origin: NOT_LISTED, Authorization: `Bearer ${own.ownerKey}` });
        expect(elsewhere.status).to.equal(200);
        expectNoCors(elsewhere);
      } finally {
        await gateway.stop();
      }
    });

    it('adds nothing when CORS_ORIGINS is unset (the default)', async () => {
      const preflight = await request(stack().url, 'OPTIONS', '/api/v1/channels', { Origin: LISTED, 'Access-Control-Request-Method': 'POST' });
      expect(preflight.status).to.equal(404);
      expectNoCors(preflight);
      const answer = await request(stack().url, 'GET', '/api/v1/users/me', { Origin: LISTED });
      expectNoCors(answer);
    });

    it('takes exact origins in the config and names a bad entry', () => {
      expect(loadConfig({}).corsOrigins).to.deep.equal([]);
      expect(loadConfig({ CORS_ORIGINS: 'https://app.example.com, http://localhost:5173,https://app.example.com' }).corsOrigins).to.deep.equal([
        'https://app.example.com',
        'http://localhost:5173',
      ]);
      for (const bad of ['*', 'app.example.com', 'https://app.example.com/', 'https://App.example.com', 'ftp://files.example.com']) {
        expect(() => loadConfig({ CORS_ORIGINS: bad }), bad).to.throw(ConfigError, /CORS_ORIGINS: .*is not an origin/);
      }
    });
  });

  describe('in Chromium, with the snippet of docs/realtime.md', () => {
    let browser: Browser;
    before(async () => {
      browser = await launchChromium();
    });
    after(async () => {
      await browser?.close();
    });

    it('reads the stream with fetch() from another origin and receives message.created', async () => {
      const snippet = codeBlocks('docs/realtime.md').find((b) => b.lang === 'js' && b.code.includes('async function readAxidStream'));
      expect(snippet, 'the readAxidStream block of docs/realtime.md').to.not.equal(undefined);
      const channel = await new Client(s.stack.url, ws.ownerKey).post('/api/v1/channels', { name: `browser-${randomBytes(3).toString('hex')}` });
      expect(channel.status).to.equal(201);

      const page = await browser.context.newPage();
      const failed: string[] = [];
      page.on('pageerror', (err) => failed.push(err.message));
      await page.goto(`${pageOrigin}/`);
      await page.addScriptTag({ content: snippet!.code });
      await page.evaluate(
        ({ baseUrl, apiKey }) => {
          const page = globalThis as unknown as PageGlobals;
          page.received = [];
          page.readAxidStream(baseUrl, apiKey, (type, data) => page.received.push({ type, data })).catch((err: Error) => (page.streamError = String(err)));
        },
        { baseUrl: s.stack.url, apiKey: ws.ownerKey },
      );
      await page.waitForFunction(() => (globalThis as unknown as PageGlobals).received.some((e) => e.type === 'init'));

      // The post goes from the page too: a preflighted cross-origin request.
      const posted = await page.evaluate(
        async ({ baseUrl, apiKey, channelId }) => {
          const res = await fetch(`${baseUrl}/api/v1/channels/${channelId}/messages`, {
            method: 'POST',
            headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
            body: JSON.stringify({ content: 'Build 42 passed', metadata: { type: 'build.finished', data: { build: 42 } } }),
          });
          const body = (await res.json()) as { data: { id: string } };
          return { status: res.status, id: body.data.id, remaining: res.headers.get('X-RateLimit-Remaining') };
        },
        { baseUrl: s.stack.url, apiKey: ws.ownerKey, channelId: channel.body.data.id as string },
      );
      expect(posted.status).to.equal(201);
      expect(posted.remaining, 'an exposed header the page can read').to.match(/^\d+$/);

      const created = await page.waitForFunction(
        (id) => (globalThis as unknown as PageGlobals).received.find((e) => e.type === 'message.created' && e.data.message?.id === id),
        posted.id,
      );
      const event = (await created.jsonValue()) as PageGlobals['received'][number];
      expect(event.data.type).to.equal('message.created');
      expect(event.data.message?.metadata).to.deep.equal({ type: 'build.finished', data: { build: 42 } });
      expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).streamError)).to.equal(undefined);
      expect(failed).to.deep.equal([]);
      await page.close();
    });
  });
});
