import { startSharedStack, stopSharedStack } from './stack.js';

// Mocha root hooks: one stack for the whole run.
export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(60_000);
    await startSharedStack();
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(30_000);
    await stopSharedStack();
  },
};
