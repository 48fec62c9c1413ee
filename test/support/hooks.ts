import { recordedResponses } from './client.js';
import { leftRunning, snapshot } from './leaks.js';
import { checkResponses } from './openapi-responses.js';
import { startSharedStack, stopSharedStack } from './stack.js';

// Mocha root hooks: one stack for the whole run. At its end, every response
// the run received must match the OpenAPI document (./openapi-responses.ts),
// and nothing the tests started may be left: no child process, no listening
// server (./leaks.ts); tests remove what they start, and mocha exits on its own.

let before = snapshot();

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(60_000);
    before = snapshot();
    await startSharedStack();
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(30_000);
    await stopSharedStack();
    const { problems } = checkResponses(recordedResponses);
    const left = await leftRunning(before);
    const failures = [
      ...(problems.length > 0 ? [`responses the OpenAPI document does not describe:\n${problems.slice(0, 30).join('\n')}`] : []),
      ...(left.length > 0 ? [`the tests left these running (each test must stop what it starts):\n  ${left.join('\n  ')}`] : []),
    ];
    if (failures.length > 0) throw new Error(failures.join('\n\n'));
  },
};
