// What the loadtest's tools set up on the kept ten-million-message workspace:
// keys for its users (made by the product's own generator, stored with one
// statement, under a name the tool deletes by at the end) and a gateway
// process of their own.
import type pg from 'pg';
import { generateApiKey } from '../../shared/auth.js';
import { freePort } from '../../shared/embedded.js';
import { spawnNode, waitReady, type Proc } from '../bench/lib/proc.js';

/** One new key for each of these users, stored under `name`: the keys, in the users' order. */
export async function insertKeys(db: pg.Client, userIds: string[], name: string): Promise<string[]> {
  const keys = userIds.map(() => generateApiKey());
  await db.query(
    `INSERT INTO api_keys (workspace_id, user_id, name, prefix, key_hash)
     SELECT u.workspace_id, k.user_id, $1, k.prefix, k.hash
       FROM unnest($2::uuid[], $3::text[], $4::text[]) AS k(user_id, prefix, hash) JOIN users u ON u.id = k.user_id`,
    [name, userIds, keys.map((k) => k.prefix), keys.map((k) => k.hash)],
  );
  return keys.map((k) => k.key);
}

/** A `ROLES=gateway` process on `databaseUrl` and a Redis prefix of its own, with no rate or stream limit in the way; ready. */
export async function startGateway(databaseUrl: string, redisPrefix: string, nodeFlags: string[] = []): Promise<{ proc: Proc; url: string }> {
  const port = await freePort();
  const proc = spawnNode('gateway', 'services/main.ts', {
    env: {
      DATABASE_URL: databaseUrl,
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_KEY_PREFIX: redisPrefix,
      ROLES: 'gateway',
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      MIGRATE_ON_START: 'false',
      STREAM_MAX_PER_USER: '100000',
      RATE_LIMIT_POINTS: '1000000000',
    },
    raiseFileLimit: true,
    nodeFlags,
  });
  const url = `http://127.0.0.1:${port}`;
  await waitReady(proc, `${url}/readyz`);
  return { proc, url };
}
