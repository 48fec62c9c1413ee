// What a test run left behind: child processes of this process and listening
// servers. The root hook (./hooks.ts) fails the run when there are any.
import { readdirSync, readFileSync } from 'node:fs';

/** This process's child processes, `pid → command` (Linux /proc; elsewhere none are seen). */
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
      children.set(Number(pid), readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim());
    } catch {
      // exited meanwhile
    }
  }
  return children;
}

/** tsx compiles the TypeScript it loads through esbuild's service process, started on first need and kept. */
const isTsxCompiler = (cmd: string) => /\/esbuild --service=/.test(cmd);

/** Listening servers (TCP or Unix socket) open in this process. */
const openServers = () => process.getActiveResourcesInfo().filter((r) => r === 'TCPServerWrap' || r === 'PipeServerWrap');

/** Children and servers there are now: what is left later, beyond these, is a leak. */
export function snapshot() {
  return { children: new Set(childProcesses().keys()), servers: openServers().length };
}

/**
 * What is running beyond `since`, one line each. Waits up to `graceMs` for it
 * to go (a process sent SIGTERM a moment ago may still be on its way out).
 */
export async function leftRunning(since: ReturnType<typeof snapshot>, graceMs = 5_000): Promise<string[]> {
  const deadline = Date.now() + graceMs;
  for (;;) {
    const servers = openServers().length - since.servers;
    const found = [
      ...[...childProcesses()].filter(([pid, cmd]) => !since.children.has(pid) && !isTsxCompiler(cmd)).map(([pid, cmd]) => `child process ${pid}: ${cmd}`),
      ...(servers > 0 ? [`${servers} listening server(s)`] : []),
    ];
    if (found.length === 0 || Date.now() > deadline) return found;
    await new Promise((r) => setTimeout(r, 100));
  }
}
