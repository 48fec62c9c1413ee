// Idempotent posting across a crash (level 3, contract §9): an API process
// killed (SIGKILL) after committing a keyed post and before answering it; the
// client's retry, to a fresh process, gets the first answer replayed and the
// channel holds exactly one message. The fault is a test-only setting
// (TEST_FAULT=crash-after-idempotent-commit, shared/http/idempotency.ts).
import { expect } from 'chai';
import pg from 'pg';
import { Client, serverLevels } from '../support/client.js';
import { expectOk } from '../support/expect.js';
import { processEnv, startProcess } from '../support/stack-process.js';
import { testEnv } from '../support/stack.js';

describe('Idempotency-Key across a crash between commit and answer (level 3)', function () {
  this.timeout(90_000);

  it('replays the committed answer to the retry: exactly one message', async () => {
    const env = testEnv();
    const key = 'k'.repeat(40);
    const level3 = { BOOTSTRAP_ADMIN_KEY: key, FEATURE_LEVEL: '3' };
    try {
      const doomed = await startProcess(processEnv(env, { ...level3, TEST_FAULT: 'crash-after-idempotent-commit' }));
      serverLevels.set(doomed.url, '3');
      const owner = new Client(doomed.url, key);
      // Without a key nothing is faulted.
      const channelId = expectOk(await owner.post('/api/v1/channels', { name: 'deploys' }), 201).data.id;
      const exited = new Promise<NodeJS.Signals | null>((resolve) => doomed.child.once('exit', (_code, signal) => resolve(signal)));
      const body = { content: 'release 1.2.3 is out' };
      const lost = await owner.post(`/api/v1/channels/${channelId}/messages`, body, { 'Idempotency-Key': 'release-1.2.3' }).then(
        (res) => res.status,
        (err: Error) => err,
      );
      expect(lost, 'the answer never arrives').to.be.instanceOf(Error);
      expect(await exited).to.equal('SIGKILL');
      serverLevels.delete(doomed.url);

      const db = new pg.Client({ connectionString: env.config.databaseUrl });
      await db.connect();
      const count = async () => Number((await db.query('SELECT count(*) AS n FROM messages WHERE channel_id = $1', [channelId])).rows[0].n);
      try {
        // The post committed before the process died.
        expect(await count()).to.equal(1);
        const fresh = await startProcess(processEnv(env, level3));
        serverLevels.set(fresh.url, '3');
        try {
          const retry = await new Client(fresh.url, key).post(`/api/v1/channels/${channelId}/messages`, body, { 'Idempotency-Key': 'release-1.2.3' });
          const message = expectOk(retry, 201).data;
          expect(retry.headers.get('idempotent-replayed')).to.equal('true');
          expect(message.content).to.equal(body.content);
          expect(await count()).to.equal(1);
          const listed = expectOk(await new Client(fresh.url, key).get(`/api/v1/channels/${channelId}/messages`)).data;
          expect(listed.map((m: { id: string }) => m.id)).to.deep.equal([message.id]);
        } finally {
          serverLevels.delete(fresh.url);
          await fresh.stop();
        }
      } finally {
        await db.end();
      }
    } finally {
      await env.cleanup();
    }
  });
});
