// No log line carries a key, a hook id, a code or a token (in a path, a
// query, a header that is logged, a field, an error message), and a request
// whose client went away is not logged as a 500. The stack logs at debug (the
// access log, the error log and the worker's log) into memory here, through
// the service's own logger (shared/logger.ts).
import http from 'node:http';
import { Writable } from 'node:stream';
import { randomBytes, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { startStack, type Stack } from '../../services/stack.js';
import { createLogger } from '../../shared/logger.js';
import { Client } from '../support/client.js';
import { expectOk } from '../support/expect.js';
import { waitFor } from '../support/files.js';
import { newWorkspace, testEnv, type TestEnv } from '../support/stack.js';

/** What each cut request was (for a failure's message). */
const cutPaths = new Map<string, string>();
const accessLine = (lines: string[], requestId: string) => lines.find((l) => l.includes(`"req_id":"${requestId}"`) && l.includes('"msg":"request"'));

describe('logs', function () {
  this.timeout(60_000);
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

  /**
   * Sends the head of a request and part of its body, and cuts the connection
   * as soon as the server has the request (its 'request' event): the
   * middlewares before the body read are still running. Resolves the request id.
   */
  function cutRequest(path: string, headers: Record<string, string>, partialBody: Buffer | string): Promise<string> {
    const requestId = `cut-${randomUUID()}`;
    cutPaths.set(requestId, `${path} ${JSON.stringify(headers)}`);
    return new Promise((resolve) => {
      const arrived = (req: http.IncomingMessage) => {
        if (req.headers['x-request-id'] !== requestId) return;
        s.server.off('request', arrived);
        client.destroy();
        resolve(requestId);
      };
      s.server.on('request', arrived);
      const client = http.request(`${s.url}${path}`, { method: 'POST', headers: { ...headers, 'x-request-id': requestId, 'content-length': String(1024 * 1024) } });
      client.on('error', () => undefined);
      client.write(partialBody);
    });
  }

  it('carry no key, hook id, code or token, whatever requests carry them and wherever: access, error and worker log', async () => {
    const ws = await newWorkspace(s);
    const channel = expectOk(await ws.owner.post('/api/v1/channels', { name: `logs-${Date.now()}` }), 201).data;
    const hook = expectOk(await ws.owner.post('/api/v1/webhooks/incoming', { channel_id: channel.id, name: 'l' }), 201).data;
    const madeUpHook = randomBytes(24).toString('base64url');
    const madeUpKey = `axid_${randomBytes(32).toString('base64url')}`;
    const code = randomBytes(32).toString('base64url');
    const idpCode = randomBytes(8).toString('hex');
    const anon = new Client(s.url);
    const before = lines.length;

    // Hook ids in the paths of both formats, real and made up, with good, broken and mislabelled bodies.
    for (const id of [hook.id, madeUpHook]) {
      await anon.post(`/hooks/${id}`, { content: 'hi' });
      await anon.post(`/hooks/compat/${id}`, { text: 'hi', attachments: [{ title: `about ${ws.ownerKey}`, text: `see https://example.com/?token=${code}` }] });
      await anon.post(`/hooks/${id}`, '{"broken', { 'content-type': 'application/json' });
      await anon.post(`/hooks/compat/${id}`, 'not gzip at all', { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      // Cut while the request was being read: once a 500 logged with its path.
      await cutRequest(`/hooks/${id}`, { 'content-type': 'application/json' }, '{"content":"');
      await cutRequest(`/hooks/compat/${id}`, { 'content-type': 'application/json' }, '{"text":"');
    }
    // Keys in the Authorization header, valid and made up, on routes that exist and that do not.
    await new Client(s.url, madeUpKey).get('/api/v1/users/me');
    await ws.owner.get(`/api/v1/users/${madeUpKey}`);
    await ws.owner.get(`/api/v1/channels/${madeUpHook}/messages`);
    await anon.post(`/hooks/${hook.id}`, { content: 'with a stray key' }, { authorization: `Bearer ${ws.ownerKey}` });
    // Keys, codes and tokens in queries.
    await anon.get(`/no/such/${madeUpHook}?token=${madeUpKey}`);
    await anon.get(`/api/v1/users/me?key=${ws.ownerKey}&access_token=${madeUpKey}`);
    await anon.get(`/api/v1/auth/oidc/callback?code=${idpCode}&state=${code}`);
    // A key sent where a request id goes (the request id is in every line of the request).
    await ws.owner.get('/api/v1/users/me', { 'x-request-id': ws.ownerKey });

    await waitFor(async () => lines.slice(before).some((l) => l.includes('"msg":"job done"') && l.includes('webhook.render')), 'the worker to render the compatible post');
    await waitFor(async () => lines.slice(before).filter((l) => l.includes('"msg":"request"')).length >= 19, 'the access log of every request');
    const secrets = [hook.id, madeUpHook, madeUpKey, madeUpKey.slice(5), ws.ownerKey, ws.ownerKey.slice(5), code, idpCode];
    for (const line of lines) for (const secret of secrets) expect(line.includes(secret), line).to.equal(false);
  });

  it('does not log a request whose client went away as a 500, whatever it was sending', async () => {
    const ws = await newWorkspace(s);
    const channel = expectOk(await ws.owner.post('/api/v1/channels', { name: `gone-${Date.now()}` }), 201).data;
    const hook = expectOk(await ws.owner.post('/api/v1/webhooks/incoming', { channel_id: channel.id, name: 'g' }), 201).data;
    const before = lines.length;
    const json = { 'content-type': 'application/json' };
    const auth = { authorization: `Bearer ${ws.ownerKey}` };
    const multipart = { ...auth, 'content-type': 'multipart/form-data; boundary=gone' };
    const filePart = `--gone\r\nContent-Disposition: form-data; name="file"; filename="gone.bin"\r\n\r\n`;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push(await cutRequest(`/hooks/${hook.id}`, json, '{"content":"'));
      ids.push(await cutRequest(`/hooks/compat/${hook.id}`, json, '{"text":"'));
      ids.push(await cutRequest(`/api/v1/channels/${channel.id}/messages`, { ...auth, ...json }, '{"content":"'));
      // A compressed body: its decoder never ended once the request was cut, and the request waited for ever.
      ids.push(await cutRequest(`/hooks/${hook.id}`, { ...json, 'content-encoding': 'gzip' }, Buffer.from([0x1f, 0x8b, 0x08, 0x00])));
      ids.push(await cutRequest('/api/v1/files', multipart, filePart));
    }
    // An upload cut past the first part sent to storage, so storage calls are in flight when it goes.
    const upload = `up-${randomUUID()}`;
    await new Promise<void>((resolve) => {
      const req = http.request(`${s.url}/api/v1/files`, { method: 'POST', headers: { ...multipart, 'x-request-id': upload, 'content-length': String(20 * 1024 * 1024) } });
      req.on('error', () => resolve());
      req.write(filePart);
      req.write(randomBytes(6 * 1024 * 1024), () => {
        req.destroy();
        resolve();
      });
    });
    ids.push(upload);

    // Every one of them ends, and is counted as the client's doing (400), not ours (500) nor a dependency's (503).
    const access = await waitFor(async () => {
      const found = ids.map((id) => accessLine(lines, id));
      return found.every(Boolean) ? (found as string[]) : undefined;
    }, 'the access log of every cut request').catch(() => {
      throw new Error(`cut requests that never ended: ${ids.filter((id) => !accessLine(lines, id)).map((id) => cutPaths.get(id)).join('; ')}`);
    });
    for (const line of access) expect(line, line).to.include('"status":"400"');
    expect(
      lines.slice(before).filter((l) => /"level":(50|60)/.test(l)),
      'error lines',
    ).to.deep.equal([]);
  });
});
