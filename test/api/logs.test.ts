// No log line carries a key, a hook id or a token (in a path, a field, an
// error message), and a request whose client went away is not logged as a
// 500. The stack logs at debug (the access log included) into memory here.
import http from 'node:http';
import { Writable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { startStack, type Stack } from '../../services/stack.js';
import { createLogger } from '../../shared/logger.js';
import { Client } from '../support/client.js';
import { expectOk } from '../support/expect.js';
import { waitFor } from '../support/files.js';
import { newWorkspace, testEnv, type TestEnv } from '../support/stack.js';

describe('logs', function () {
  this.timeout(30_000);
  const lines: string[] = [];
  let env: TestEnv;
  let s: Stack;

  before(async () => {
    env = testEnv({ LOG_LEVEL: 'debug' });
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        done();
      },
    });
    s = await startStack(env.config, createLogger('debug', sink));
  });

  after(async () => {
    await s?.close();
    await env?.cleanup();
  });

  it('carry no key, hook id or token, whatever requests carry them', async () => {
    const ws = await newWorkspace(s);
    const channel = expectOk(await ws.owner.post('/api/v1/channels', { name: `logs-${Date.now()}` }), 201).data;
    const hook = expectOk(await ws.owner.post('/api/v1/webhooks/incoming', { channel_id: channel.id, name: 'l' }), 201).data;
    const madeUpHook = randomBytes(24).toString('base64url');
    const madeUpKey = `axid_${randomBytes(32).toString('base64url')}`;
    const anon = new Client(s.url);
    await anon.post(`/hooks/${hook.id}`, { content: 'hi' });
    await anon.post(`/hooks/compat/${hook.id}`, { text: 'hi', attachments: [{ title: 't', text: 'x' }] });
    await anon.post(`/hooks/${madeUpHook}`, { content: 'hi' });
    await anon.post(`/hooks/compat/${madeUpHook}`, { text: 'hi' });
    await anon.post(`/hooks/${hook.id}`, '{"broken', { 'content-type': 'application/json' });
    await new Client(s.url, madeUpKey).get('/api/v1/users/me');
    await ws.owner.get(`/api/v1/users/${madeUpKey}`);
    await ws.owner.get(`/api/v1/channels/${madeUpHook}/messages`);
    await anon.get(`/no/such/${madeUpHook}?token=${madeUpKey}`);
    await waitFor(async () => lines.some((l) => l.includes('"route":"/hooks/compat/{webhook_id}"')), 'the access log of the requests');
    const secrets = [hook.id, madeUpHook, madeUpKey, ws.ownerKey, madeUpKey.slice(5)];
    expect(lines.length).to.be.above(5);
    for (const line of lines) for (const secret of secrets) expect(line.includes(secret), line).to.equal(false);
  });

  it('does not log a request whose client went away as a 500', async () => {
    const ws = await newWorkspace(s);
    const before = lines.length;
    const boundary = 'gone';
    await new Promise<void>((resolve) => {
      const req = http.request(`${s.url}/api/v1/files`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ws.ownerKey}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(20 * 1024 * 1024) },
      });
      req.on('error', () => resolve());
      req.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="gone.bin"\r\n\r\n`);
      // Past the first part of a multipart upload to storage, so storage calls are in flight when it goes.
      req.write(randomBytes(6 * 1024 * 1024));
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 500);
    });
    const access = await waitFor(async () => lines.slice(before).find((l) => l.includes('"route":"/api/v1/files"') && l.includes('"msg":"request"')), 'the access log of the upload');
    // Counted as the client's doing (400), not as ours (500) nor as a dependency's (503).
    expect(access).to.include('"status":"400"');
    expect(lines.slice(before).filter((l) => /"level":(50|60)/.test(l)), 'error lines').to.deep.equal([]);
  });
});
