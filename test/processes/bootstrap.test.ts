import { expect } from 'chai';
import { loadConfig, ConfigError } from '../../shared/config.js';
import { Client } from '../support/client.js';
import { expectOk } from '../support/expect.js';
import { processEnv, startProcess } from '../support/stack-process.js';
import { testEnv } from '../support/stack.js';
import pg from 'pg';

async function workspaceCount(databaseUrl: string) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return Number((await client.query('SELECT count(*) AS c FROM workspaces')).rows[0].c);
  } finally {
    await client.end();
  }
}

describe('bootstrap', function () {
  this.timeout(90_000);

  it('creates the workspace, its owner and BOOTSTRAP_ADMIN_KEY on the first start only, and stops cleanly on SIGTERM', async () => {
    const env = testEnv();
    const key = 'k'.repeat(40);
    try {
      const first = await startProcess(processEnv(env, { BOOTSTRAP_ADMIN_KEY: key }));
      const me = expectOk(await new Client(first.url, key).get('/api/v1/users/me'));
      expect(me.data.role).to.equal('owner');
      expect(first.output()).not.to.include(key);
      const started = Date.now();
      expect(await first.stop()).to.equal(0);
      expect(Date.now() - started).to.be.below(10_000);

      const second = await startProcess(processEnv(env, { BOOTSTRAP_ADMIN_KEY: 'z'.repeat(40) }));
      expect(await workspaceCount(env.config.databaseUrl)).to.equal(1);
      expect((await new Client(second.url, 'z'.repeat(40)).get('/api/v1/users/me')).status).to.equal(401);
      expectOk(await new Client(second.url, key).get('/api/v1/users/me'));
      await second.stop();
    } finally {
      await env.cleanup();
    }
  });

  it('prints a fresh owner key once when BOOTSTRAP_ADMIN_KEY is unset, and nothing on later starts', async () => {
    const env = testEnv();
    try {
      const first = await startProcess(processEnv(env));
      const printed = /Axid owner API key[^\n]*\n\s*(\S+)/.exec(first.output());
      expect(printed, first.output()).to.not.equal(null);
      expectOk(await new Client(first.url, printed![1]).get('/api/v1/workspaces/current'));
      await first.stop();
      const second = await startProcess(processEnv(env));
      expect(second.output()).not.to.include('Axid owner API key');
      await second.stop();
      expect(await workspaceCount(env.config.databaseUrl)).to.equal(1);
    } finally {
      await env.cleanup();
    }
  });

  it('exits 1 with a message naming each bad variable', async () => {
    const env = testEnv();
    try {
      const started = startProcess(processEnv(env, { PORT: '3000', RATE_LIMIT_POINTS: 'many', ROLES: 'api,cook' }));
      let message = '';
      await started.catch((err: Error) => (message = err.message));
      expect(message).to.match(/exited early \(1\)/);
      expect(message).to.include('RATE_LIMIT_POINTS');
      expect(message).to.include('ROLES');
    } finally {
      await env.cleanup();
    }
  });
});

describe('configuration loader', () => {
  it('applies the documented defaults', () => {
    const c = loadConfig({});
    expect(c.roles).to.deep.equal(['api', 'gateway', 'worker']);
    expect(c.port).to.equal(3000);
    expect(c.publicBaseUrl).to.equal('http://localhost:3000');
    expect(c.databaseUrl).to.equal('postgres://postgres@127.0.0.1:5432/axid');
    expect(c.rateLimit).to.deep.equal({ points: 1200, duration: 60 });
    expect(c.trackerHosts).to.deep.equal(['linear.app']);
    expect(c.codeHosts).to.deep.equal(['github.com']);
    expect(c.s3).to.include({ region: 'us-east-1', bucket: 'axid-files', forcePathStyle: true });
  });

  it('reports every bad variable at once', () => {
    let err: unknown;
    try {
      loadConfig({ PORT: 'x', BOOTSTRAP_ADMIN_KEY: 'short', S3_FORCE_PATH_STYLE: 'maybe', LOG_LEVEL: 'loud' });
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(ConfigError);
    for (const name of ['PORT', 'BOOTSTRAP_ADMIN_KEY', 'S3_FORCE_PATH_STYLE', 'LOG_LEVEL']) {
      expect((err as Error).message).to.include(name);
    }
  });
});
