// The root hook's leak check (test/support/leaks.ts) sees what a test leaves behind.
import { spawn } from 'node:child_process';
import net from 'node:net';
import { expect } from 'chai';
import { leftRunning, snapshot } from '../support/leaks.js';

describe('leak check of the test run', () => {
  it('reports a child process left running, and nothing once it exited', async () => {
    const since = snapshot();
    const child = spawn('sleep', ['60'], { stdio: 'ignore' });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      expect(await leftRunning(since, 0)).to.deep.equal([`child process ${child.pid}: sleep 60`]);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
    expect(await leftRunning(since, 2_000)).to.deep.equal([]);
  });

  it('reports a listening server left open, and nothing once it closed', async () => {
    const since = snapshot();
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      expect(await leftRunning(since, 0)).to.deep.equal(['1 listening server(s)']);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    expect(await leftRunning(since, 2_000)).to.deep.equal([]);
  });
});
