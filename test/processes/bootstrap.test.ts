import { expect } from 'chai';
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
      // #general is there, a default channel (new agents join it) with the owner in it.
      const channels = expectOk(await new Client(first.url, key).get('/api/v1/channels'));
      const general = channels.data.filter((c: { name: string }) => c.name === 'general');
      expect(general).to.have.length(1);
      expect(general[0]).to.include({ is_default: true, is_private: false });
      expect(expectOk(await new Client(first.url, key).get(`/api/v1/channels/${general[0].id}/members`)).data.map((m: { user_id: string }) => m.user_id)).to.deep.equal([me.data.id]);
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
