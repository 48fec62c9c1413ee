import type { Runtime } from '../../shared/runtime.js';

// Placeholder until the files issue lands.
export async function startWorker(_rt: Runtime, _o: { redisUrl: string }) {
  return { async close() {} };
}
