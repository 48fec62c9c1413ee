// KEYS for tests, on one node or on every primary of a cluster (a cluster's
// KEYS answers for the one node it reaches).
import { isCluster, type Redis } from '../../shared/redis.js';

export async function redisKeys(redis: Redis, pattern: string): Promise<string[]> {
  if (!isCluster(redis)) return redis.keys(pattern);
  return (await Promise.all(redis.nodes('master').map((node) => node.keys(pattern)))).flat();
}
