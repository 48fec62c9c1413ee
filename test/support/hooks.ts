import { leftRunning, snapshot } from './leaks.js';
import { startSharedStack, stopSharedStack } from './stack.js';

// Mocha root hooks: one stack for the whole run, and the run fails if its
// tests leave a child process or a listening server behind (./leaks.ts): tests
// remove everything they start, and mocha then exits on its own.

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
    const left = await leftRunning(before);
    if (left.length > 0) throw new Error(`the tests left these running (each test must stop what it starts):\n  ${left.join('\n  ')}`);
  },
};
