// The ten-million-message recipe of bench scenario 8 (test/bench/dataset) at
// its small size, so that it cannot rot: it builds on the current migrations,
// its shape is as described (skewed channels, threads, reactions, the rare and
// the common word), and the API serves what it made.
import { expect } from 'chai';
import pg from 'pg';
import { startStack } from '../../services/stack.js';
import { generateApiKey } from '../../shared/auth.js';
import { createLogger } from '../../shared/logger.js';
import { COMMON_WORD, DATASET_SIZES, RARE_WORD, dataset, shape } from '../bench/dataset/big-workspace.js';
import { ensureBigWorkspace } from '../bench/dataset/ensure.js';
import { Client } from '../support/client.js';
import { expectOk } from '../support/expect.js';
import { testEnv } from '../support/stack.js';

describe('bench data set (small size of the ten-million-message recipe)', function () {
  this.timeout(120_000);

  it('builds on the current schema with the described shape, and the API serves it', async () => {
    const env = testEnv({ MIGRATE_ON_START: 'false' });
    const size = DATASET_SIZES.small;
    const db = new pg.Client({ connectionString: env.config.databaseUrl });
    try {
      const state = await ensureBigWorkspace(env.config.databaseUrl, size);
      expect(state.builtNow).to.equal(true);
      expect((await ensureBigWorkspace(env.config.databaseUrl, size)).builtNow, 'kept on the second call').to.equal(false);
      await db.connect();
      const q = async (sql: string, values: unknown[] = []) => (await db.query(sql, values)).rows;
      const { replies, roots } = shape(size);
      const [counts] = await q(`SELECT (SELECT count(*) FROM messages)::int AS messages, (SELECT count(*) FROM messages WHERE thread_id IS NOT NULL)::int AS replies,
                                       (SELECT count(*) FROM users)::int AS users, (SELECT count(*) FROM channels)::int AS channels`);
      expect(counts).to.deep.equal({ messages: size.messages, replies, users: size.users, channels: size.channels });
      // Skewed: the big channels hold about bigShare of the messages each, more than any other.
      const sizes = (await q(`SELECT channel_id, count(*)::int AS n FROM messages GROUP BY channel_id ORDER BY n DESC`)) as { channel_id: string; n: number }[];
      const [largest] = await q(`SELECT ${dataset.channel(dataset.largestChannel)} AS id`);
      expect(sizes.slice(0, size.bigChannels).map((r) => r.channel_id)).to.include(largest.id);
      expect(sizes[0]!.n).to.be.greaterThan(sizes[sizes.length - 1]!.n * 10);
      // Threads and hints agree with the rows.
      const [threads] = await q(`SELECT count(*)::int AS n, sum(reply_count)::int AS replies FROM threads`);
      expect(threads.replies).to.equal(replies);
      expect(threads.n).to.be.within(1, roots);
      const [hints] = await q(`SELECT count(*) FILTER (WHERE has_replies)::int AS replies, count(*) FILTER (WHERE has_reactions)::int AS reactions,
                                      (SELECT count(DISTINCT message_id) FROM reactions)::int AS reacted FROM messages`);
      expect(hints.replies).to.equal(threads.n);
      expect(hints.reactions).to.equal(hints.reacted);
      const [words] = await q(`SELECT count(*) FILTER (WHERE content ~ '\\m${RARE_WORD}\\M')::int AS rare, count(*) FILTER (WHERE content ~ '\\m${COMMON_WORD}\\M')::int AS common FROM messages`);
      expect(words.rare).to.be.within(5, 30);
      expect(words.common).to.be.greaterThan(size.messages / 3);
      const [probe] = await q(`SELECT count(*)::int AS n FROM channel_members WHERE user_id = ${dataset.user(dataset.probeUser)}`);
      expect(probe.n).to.equal(Math.min(dataset.probeChannels, size.channels));

      // The API reads it: the probe user's first page of the largest channel, newest first.
      const key = generateApiKey();
      await q(`INSERT INTO api_keys (workspace_id, user_id, name, prefix, key_hash) VALUES (${dataset.workspaceId}, ${dataset.user(dataset.probeUser)}, 'test', $1, $2)`, [
        key.prefix,
        key.hash,
      ]);
      const s = await startStack(env.config, createLogger(env.config.logLevel));
      try {
        const client = new Client(s.url, key.key);
        const page = expectOk(await client.get(`/api/v1/channels/${largest.id}/messages?limit=50`));
        expect(page.data).to.have.length(50);
        expect(page.pagination.has_more).to.equal(true);
        const withThread = page.data.find((m: { thread: unknown }) => m.thread);
        if (withThread) {
          const replyPage = expectOk(await client.get(`/api/v1/channels/${largest.id}/messages?thread_id=${withThread.id}&limit=50`));
          expect(replyPage.data.length).to.equal(Math.min(50, withThread.thread.reply_count));
        }
      } finally {
        await s.close();
      }
    } finally {
      await db.end().catch(() => undefined);
      await env.cleanup();
    }
  });
});
