import { createLogger } from '../../shared/logger.js';
import { startStack, type Stack } from '../../services/stack.js';
import { testEnv, type TestEnv } from './stack.js';

/** A stack of its own (own database and Redis prefix) for tests that change settings. */
export async function separateStack(overrides: Record<string, string> = {}): Promise<{ stack: Stack; env: TestEnv; stop(): Promise<void> }> {
  const env = testEnv(overrides);
  const stack = await startStack(env.config, createLogger(env.config.logLevel));
  return {
    stack,
    env,
    async stop() {
      await stack.close();
      await env.cleanup();
    },
  };
}
