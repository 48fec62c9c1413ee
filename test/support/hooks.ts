process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
import { recordedResponses } from './client.js';
import { checkResponses } from './openapi-responses.js';
import { startSharedStack, stopSharedStack } from './stack.js';

// Mocha root hooks: one stack for the whole run; at its end, every response
// the run received must match the OpenAPI document (test/support/openapi-responses.ts).
export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(60_000);
    await startSharedStack();
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(30_000);
    await stopSharedStack();
    const { problems } = checkResponses(recordedResponses);
    if (problems.length > 0) {
      throw new Error(`responses the OpenAPI document does not describe:\n${problems.slice(0, 30).join('\n')}`);
    }
  },
};
