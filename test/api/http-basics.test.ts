import { expect } from 'chai';
import { Client } from '../support/client.js';
import { expectError, expectOk } from '../support/expect.js';
import { separateStack } from '../support/separate-stack.js';
import { newWorkspace, stack } from '../support/stack.js';

describe('HTTP basics', () => {
  it('sets X-Service-Feature-Level and the rate-limit headers on a success', async () => {
    const ws = await newWorkspace();
    const res = await ws.owner.get('/api/v1/users/me');
    expectOk(res);
    expect(Number(res.headers.get('x-ratelimit-limit'))).to.be.greaterThan(0);
    expect(Number(res.headers.get('x-ratelimit-remaining'))).to.be.at.least(0);
    const reset = Number(res.headers.get('x-ratelimit-reset'));
    expect(reset).to.be.within(Date.now() / 1000, Date.now() / 1000 + 3600); // Unix seconds
  });

  it('sets the same headers on an error response', async () => {
    const res = await new Client(stack().url).get('/api/v1/users/me');
    expectError(res, 401, 'unauthorized');
    expect(res.headers.get('x-ratelimit-limit')).to.be.a('string');
    expect(res.headers.get('x-ratelimit-reset')).to.be.a('string');
  });

  it('answers an unknown route with 404 not_found', async () => {
    const ws = await newWorkspace();
    expectError(await ws.owner.get('/api/v1/nothing-here'), 404, 'not_found');
    expectError(await new Client(stack().url).get('/hooks/nothing'), 404, 'not_found');
  });

  it('answers malformed JSON with 400 validation_error', async () => {
    const ws = await newWorkspace();
    const res = await ws.owner.request('POST', '/api/v1/api-keys', '{"name": ', { 'content-type': 'application/json' });
    expectError(res, 400, 'validation_error');
    expect(res.body.error.message).to.match(/JSON/);
  });

  it('answers a JSON body that is not an object with 400 validation_error', async () => {
    const ws = await newWorkspace();
    expectError(await ws.owner.request('POST', '/api/v1/api-keys', '[1,2]', { 'content-type': 'application/json' }), 400, 'validation_error');
    expectError(await ws.owner.request('POST', '/api/v1/api-keys', '"x"', { 'content-type': 'application/json' }), 400, 'validation_error');
  });

  it('answers an oversized JSON body with 413 payload_too_large', async () => {
    const ws = await newWorkspace();
    const res = await ws.owner.post('/api/v1/api-keys', { name: 'x'.repeat(2 * 1024 * 1024) });
    expectError(res, 413, 'payload_too_large');
  });

  it('serves /healthz, /readyz and /metrics with the feature level and without rate limiting', async () => {
    const anon = new Client(stack().url);
    for (const path of ['/healthz', '/readyz', '/metrics']) {
      const res = await anon.get(path);
      expect(res.status, path).to.equal(200);
      expect(res.headers.get('x-service-feature-level')).to.equal('2');
      expect(res.headers.get('x-ratelimit-limit'), path).to.equal(null);
    }
    expect((await anon.get('/metrics')).text).to.include('axid_http_requests_total');
  });

  it('answers POST /interactions/actions with 501 not_implemented for any authenticated caller', async () => {
    const ws = await newWorkspace();
    const member = await ws.user();
    expectError(await ws.owner.post('/api/v1/interactions/actions', { action_id: 'x' }), 501, 'not_implemented');
    expectError(await member.client.post('/api/v1/interactions/actions', {}), 501, 'not_implemented');
    expectError(await new Client(stack().url).post('/api/v1/interactions/actions', {}), 401, 'unauthorized');
  });

  it('echoes a request id', async () => {
    const res = await new Client(stack().url).get('/healthz', { 'x-request-id': 'abcdef123456' });
    expect(res.headers.get('x-request-id')).to.equal('abcdef123456');
  });
});

describe('rate limiting', () => {
  let s: Awaited<ReturnType<typeof separateStack>>;
  before(async () => {
    s = await separateStack({ RATE_LIMIT_POINTS: '3', RATE_LIMIT_DURATION: '60' });
  });
  after(async () => s.stop());

  it('answers 429 rate_limited with Retry-After once a key used its window, and counts keys apart', async () => {
    const ws = await newWorkspace(s.stack);
    const other = await newWorkspace(s.stack); // its own key: its own budget (one request spent creating nothing)
    const remaining: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await ws.owner.get('/api/v1/users/me');
      expectOk(res);
      remaining.push(Number(res.headers.get('x-ratelimit-remaining')));
    }
    expect(remaining).to.deep.equal([2, 1, 0]);
    const refused = await ws.owner.get('/api/v1/users/me');
    expectError(refused, 429, 'rate_limited');
    expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 60);
    expect(refused.headers.get('x-ratelimit-remaining')).to.equal('0');
    expect(refused.headers.get('x-ratelimit-limit')).to.equal('3');
    expectOk(await other.owner.get('/api/v1/users/me'));
  });

  it('limits unauthenticated requests per client address', async () => {
    const anon = new Client(s.stack.url);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await anon.get('/api/v1/nothing')).status);
    expect(statuses).to.deep.equal([404, 404, 404, 429]);
    // ops endpoints stay reachable
    expect((await anon.get('/healthz')).status).to.equal(200);
  });
});
