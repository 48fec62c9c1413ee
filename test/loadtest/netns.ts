// The load generator's own corner of the machine (`LOADTEST_NETNS=1`,
// docs/bench.md "Supported users"): a network namespace joined to the host by
// a veth pair, so that its requests reach Axid over an interface of their own
// rather than loopback, and a CPU quota, so that it cannot take more than its
// share of the cores Axid is measured on. The quota is a cgroup's: v2
// `cpu.max` where the unified hierarchy has the cpu controller, v1
// `cpu.cfs_quota_us` where the cpu controller is mounted apart; without
// either, `taskset` pins the load generator to the last core. Everything it
// makes is removed by `teardown()`, which the run calls on every way out.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** What the run prints, and exits with code 3, when the machine does not allow a network namespace. */
export const NETNS_REFUSED = 'LOADTEST_NETNS: this machine does not allow a network namespace for the load generator';

export type QuotaMethod = 'cgroup v2 cpu.max' | 'cgroup v1 cpu.cfs_quota_us' | 'taskset' | 'none';

export interface LoadgenCorner {
  /** The namespace's name (`ip netns`). */
  name: string;
  /** Axid's address as the load generator reaches it (the host's end of the veth pair): Axid listens there too. */
  hostAddress: string;
  /** The load generator's address inside the namespace. */
  loadgenAddress: string;
  quota: { method: QuotaMethod; cpus: number; cgroup: string | null };
  /** Starts a program inside the namespace under the quota (stdio as given; 'ipc' allowed). */
  spawn(file: string, args: string[], o: { env: NodeJS.ProcessEnv; stdio: ('ignore' | 'pipe' | 'ipc' | 'inherit')[]; cwd: string }): ChildProcess;
  /** CPU time the quota held the load generator back, in ms so far (cgroups only; null otherwise). */
  throttledMs(): number | null;
  /** Removes the namespace (and with it both ends of the veth pair) and the cgroup, once its processes are gone. Safe to call twice. */
  teardown(): void;
}

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString();
const errorText = (err: unknown) => ((err as { stderr?: Buffer }).stderr?.toString().trim() || (err as Error).message).split('\n')[0];

/** Which quota this machine allows (the first of cgroup v2, cgroup v1, taskset). */
export function quotaMethod(): QuotaMethod {
  const v2 = '/sys/fs/cgroup/cgroup.controllers';
  if (existsSync(v2) && readFileSync(v2, 'utf8').split(/\s+/).includes('cpu')) return 'cgroup v2 cpu.max';
  if (existsSync('/sys/fs/cgroup/cpu/cpu.cfs_quota_us')) return 'cgroup v1 cpu.cfs_quota_us';
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
    return 'taskset';
  } catch {
    return 'none';
  }
}

/**
 * Makes the namespace, its veth pair and the quota. Throws an Error whose
 * message starts with NETNS_REFUSED when the machine does not allow it.
 */
export function makeLoadgenCorner(cpus: number): LoadgenCorner {
  const id = randomBytes(2).toString('hex');
  const name = `axidlg${id}`;
  const hostIf = `axlg${id}h`;
  const nsIf = `axlg${id}n`;
  // A /30 of 10.231.0.0/16 picked from the id (two runs at once on one machine get different ones).
  const block = parseInt(id, 16) % 16384;
  const base = `10.231.${Math.floor(block / 64)}.${(block % 64) * 4}`;
  const [a, b, c, d] = base.split('.').map(Number) as [number, number, number, number];
  const hostAddress = `${a}.${b}.${c}.${d + 1}`;
  const loadgenAddress = `${a}.${b}.${c}.${d + 2}`;
  let cgroup: string | null = null;
  let tornDown = false;
  const children = new Set<ChildProcess>();

  const teardown = () => {
    if (tornDown) return;
    tornDown = true;
    for (const child of children) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      child.kill('SIGKILL');
      // Dead before the run goes on (teardown runs on the way out, where no event would be waited for).
      for (let i = 0; i < 50 && running(child.pid!); i++) execFileSync('sleep', ['0.1']);
    }
    // Deleting the namespace deletes its end of the pair, and with it the host's end.
    try {
      ip('netns', 'del', name);
    } catch {
      /* not made, or gone */
    }
    try {
      ip('link', 'del', hostIf);
    } catch {
      /* gone with the namespace */
    }
    if (cgroup) removeCgroup(cgroup);
  };

  try {
    ip('netns', 'add', name);
  } catch (err) {
    throw new Error(`${NETNS_REFUSED} (ip netns add: ${errorText(err)}); run without LOADTEST_NETNS, or as root on a machine that allows it`);
  }
  try {
    ip('link', 'add', hostIf, 'type', 'veth', 'peer', 'name', nsIf);
    ip('link', 'set', nsIf, 'netns', name);
    ip('addr', 'add', `${hostAddress}/30`, 'dev', hostIf);
    ip('link', 'set', hostIf, 'up');
    ip('netns', 'exec', name, 'ip', 'addr', 'add', `${loadgenAddress}/30`, 'dev', nsIf);
    ip('netns', 'exec', name, 'ip', 'link', 'set', nsIf, 'up');
    ip('netns', 'exec', name, 'ip', 'link', 'set', 'lo', 'up');
  } catch (err) {
    teardown();
    throw new Error(`${NETNS_REFUSED} (veth pair: ${errorText(err)}); run without LOADTEST_NETNS`);
  }

  const method = quotaMethod();
  try {
    if (method === 'cgroup v2 cpu.max') {
      cgroup = `/sys/fs/cgroup/axid-loadgen-${id}`;
      mkdirSync(cgroup);
      writeFileSync(path.join(cgroup, 'cpu.max'), `${Math.round(cpus * 100_000)} 100000`);
    } else if (method === 'cgroup v1 cpu.cfs_quota_us') {
      cgroup = `/sys/fs/cgroup/cpu/axid-loadgen-${id}`;
      mkdirSync(cgroup);
      writeFileSync(path.join(cgroup, 'cpu.cfs_period_us'), '100000');
      writeFileSync(path.join(cgroup, 'cpu.cfs_quota_us'), String(Math.round(cpus * 100_000)));
    }
  } catch (err) {
    teardown();
    throw new Error(`LOADTEST_NETNS: could not set the load generator's CPU quota (${method}: ${(err as Error).message})`);
  }

  return {
    name,
    hostAddress,
    loadgenAddress,
    quota: { method, cpus, cgroup },
    spawn(file, args, o) {
      // taskset pins to the last core, the one Linux fills last; a cgroup takes the child's pid before it runs a line of JavaScript.
      const inner = method === 'taskset' ? ['taskset', '-c', String(os.availableParallelism() - 1), file, ...args] : [file, ...args];
      const enter = ['ip', 'netns', 'exec', name, ...inner];
      // The shell joins the cgroup before it becomes `ip` and then the program (one pid throughout): inside the
      // namespace `ip netns exec` mounts a sysfs of its own, where the cgroup files are not.
      const child = cgroup
        ? spawn('sh', ['-c', `echo $$ > ${cgroup}/cgroup.procs && exec "$@"`, 'loadgen', ...enter], { env: o.env, stdio: o.stdio, cwd: o.cwd })
        : spawn(enter[0]!, enter.slice(1), { env: o.env, stdio: o.stdio, cwd: o.cwd });
      children.add(child);
      child.once('exit', () => children.delete(child));
      return child;
    },
    throttledMs() {
      if (!cgroup) return null;
      try {
        const stat = Object.fromEntries(
          readFileSync(path.join(cgroup, 'cpu.stat'), 'utf8')
            .trim()
            .split('\n')
            .map((line) => line.split(' ') as [string, string]),
        );
        if (stat.throttled_usec !== undefined) return Number(stat.throttled_usec) / 1000;
        if (stat.throttled_time !== undefined) return Number(stat.throttled_time) / 1e6;
      } catch {
        /* gone */
      }
      return null;
    },
    teardown,
  };
}

/** Removes a cgroup once the processes in it have exited (they are killed first; rmdir fails while any is alive). */
function removeCgroup(dir: string) {
  for (let i = 0; i < 50; i++) {
    try {
      const pids = readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').trim().split('\n').filter(Boolean);
      for (const pid of pids) {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          /* gone */
        }
      }
      rmdirSync(dir);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      execFileSync('sleep', ['0.1']);
    }
  }
}

/** Whether a process is alive (a zombie is not: it has exited, its parent has not read its status yet). */
export function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}
