import { readdirSync, readFileSync } from 'node:fs';
import { startSharedStack, stopSharedStack } from './stack.js';

// Mocha root hooks: one stack for the whole run, and a run fails if its tests
// leave a child process or a listening server behind (tests remove everything
// they start; a leak here is what used to leave redis-servers running after
// `npm test`, and what kept mocha from exiting on its own).

/** This process's child processes, `pid command` (Linux /proc; elsewhere none are seen). */
function childProcesses(): Map<number, string> {
  const children = new Map<number, string>();
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return children;
  }
  for (const pid of pids) {
    try {
      // /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may hold spaces and parentheses.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== process.pid) continue;
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
      children.set(Number(pid), cmd);
    } catch {
      // exited meanwhile
    }
  }
  return children;
}

/** Listening servers (TCP or Unix socket) still open in this process. */
const openServers = () => process.getActiveResourcesInfo().filter((r) => r === 'TCPServerWrap' || r === 'PipeServerWrap');

/** Children present before the tests ran, which are not the tests' to stop. */
let before = new Set<number>();
/** tsx compiles the TypeScript it loads through esbuild's service process, started on first need and kept. */
const isTsxCompiler = (cmd: string) => /\/esbuild --service=/.test(cmd);

async function leaks(): Promise<string[]> {
  // A process sent SIGTERM a moment ago may still be on its way out.
  const deadline = Date.now() + 5_000;
  for (;;) {
    const found = [
      ...[...childProcesses()].filter(([pid, cmd]) => !before.has(pid) && !isTsxCompiler(cmd)).map(([pid, cmd]) => `child process ${pid}: ${cmd}`),
      ...openServers().map((r) => `open server (${r})`),
    ];
    if (found.length === 0 || Date.now() > deadline) return found;
    await new Promise((r) => setTimeout(r, 100));
  }
}

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(60_000);
    before = new Set(childProcesses().keys());
    await startSharedStack();
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(30_000);
    await stopSharedStack();
    const left = await leaks();
    if (left.length > 0) throw new Error(`the tests left these running (each test must stop what it starts):\n  ${left.join('\n  ')}`);
  },
};
