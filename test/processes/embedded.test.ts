import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { loadConfig } from '../../shared/config.js';
import { freePort } from '../../shared/embedded.js';
import { startStack } from '../../services/stack.js';
import { Client } from '../support/client.js';
import { expectOk } from '../support/expect.js';
import { openRaw } from '../support/sse.js';
import { deleteRedisKeys } from '../support/stack.js';

/** A logger whose lines the test can read. */
function capturingLogger() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { log: pino({ level: 'info' }, sink), lines };
}

describe('embedded defaults', function () {
  this.timeout(120_000);

  it('runs on embedded PostgreSQL (PGlite) and redis-server from PATH when nothing answers, and keeps data across restarts', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'axid-embedded-'));
    const key = 'e'.repeat(40);
    const prefix = `axidembedded:${process.pid}:`;
    // DATABASE_URL and REDIS_URL unset: the defaults are probed on closed ports here.
    const config = loadConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', BOOTSTRAP_ADMIN_KEY: key, REDIS_KEY_PREFIX: prefix });
    const probes = async () => ({ postgres: { host: '127.0.0.1', port: await freePort() }, redisUrl: `redis://127.0.0.1:${await freePort()}` });
    try {
      const first = capturingLogger();
      let s = await startStack(config, first.log, await probes());
      const logged = first.lines.join('');
      expect(logged).to.include('embedded PostgreSQL (PGlite)');
      expect(logged).to.include('started redis-server from PATH');
      expect(logged).to.include('embedded S3-compatible server');
      const owner = new Client(s.url, key);
      const bot = expectOk(await owner.post('/api/v1/agents', { name: 'embedded-bot' }), 201);
      await s.close();

      s = await startStack(config, capturingLogger().log, await probes());
      const agents = expectOk(await new Client(s.url, key).get('/api/v1/agents'));
      expect(agents.data.map((a: { id: string }) => a.id)).to.deep.equal([bot.data.id]);
      await s.close();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
      await deleteRedisKeys(prefix);
    }
  });

  it('delivers a posted message on the stream and removes the published outbox rows', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'axid-embedded-'));
    const key = 'r'.repeat(40);
    const prefix = `axidembedded:${process.pid}:rt:`;
    const config = loadConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', BOOTSTRAP_ADMIN_KEY: key, REDIS_KEY_PREFIX: prefix });
    const probes = { postgres: { host: '127.0.0.1', port: await freePort() }, redisUrl: `redis://127.0.0.1:${await freePort()}` };
    const s = await startStack(config, capturingLogger().log, probes);
    const stream = await openRaw(s.url, key);
    try {
      const owner = new Client(s.url, key);
      const channel = expectOk(await owner.post('/api/v1/channels', { name: 'embedded-realtime' }), 201).data;
      const message = expectOk(await owner.post(`/api/v1/channels/${channel.id}/messages`, { content: 'hello from PGlite' }), 201).data;
      const frame = await stream.waitFor((f) => f.event === 'message.created' && f.data.message.id === message.id);
      expect(frame.data.message.content).to.equal('hello from PGlite');
      // Published rows are deleted within the relay's delete delay.
      const deadline = Date.now() + 10_000;
      let left = -1;
      while (left !== 0 && Date.now() < deadline) {
        left = Number((await s.rt.db('outbox').count<{ c: string }[]>('* as c'))[0]?.c);
        if (left !== 0) await new Promise((r) => setTimeout(r, 100));
      }
      expect(left, 'outbox rows left after publishing').to.equal(0);
    } finally {
      stream.close();
      await s.close();
      rmSync(dataDir, { recursive: true, force: true });
      await deleteRedisKeys(prefix);
    }
  });
});
