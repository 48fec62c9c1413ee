// Child processes of the bench: spawning (optionally with a raised open-file
// limit), waiting until they listen, reading their memory, stopping them.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const benchDir = path.join(repoRoot, 'test/bench');

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Every child the bench started, so cleanup stops exactly these. */
const live = new Set<Proc>();

export interface Proc {
  name: string;
  child: ChildProcess;
  pid: number;
  output(): string;
  /** SIGTERM, then SIGKILL after graceMs; resolves when it exited. */
  stop(graceMs?: number): Promise<void>;
}

export interface SpawnOptions {
  env?: Record<string, string>;
  args?: string[];
  /** Adds an IPC channel (fd 3). */
  ipc?: boolean;
  /** Node flags before the script, e.g. --cpu-prof. */
  nodeFlags?: string[];
  /** Raise `ulimit -n` first (through bash, then exec: the pid stays the node process). */
  raiseFileLimit?: boolean;
}

/** Runs a TypeScript file under node with tsx, as the stack itself is run. */
export function spawnNode(name: string, script: string, o: SpawnOptions = {}): Proc {
  return spawnProgram(name, process.execPath, [...(o.nodeFlags ?? []), '--import', 'tsx', script, ...(o.args ?? [])], o);
}

/** Any program (node, nginx), tracked like the rest so cleanup stops it. */
export function spawnProgram(name: string, file: string, args: string[], o: Omit<SpawnOptions, 'args' | 'nodeFlags'> = {}): Proc {
  const stdio: ('ignore' | 'pipe' | 'ipc')[] = ['ignore', 'pipe', 'pipe'];
  if (o.ipc) stdio.push('ipc');
  const env = { ...process.env, ...o.env };
  const child = o.raiseFileLimit
    ? spawn('bash', ['-c', 'ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"; exec "$0" "$@"', file, ...args], {
        cwd: repoRoot,
        env,
        stdio,
      })
    : spawn(file, args, { cwd: repoRoot, env, stdio });
  let out = '';
  const keep = (d: Buffer) => {
    out += d.toString();
    if (out.length > 200_000) out = out.slice(-100_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const proc: Proc = {
    name,
    child,
    pid: child.pid!,
    output: () => out,
    async stop(graceMs = 3000) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      }
      live.delete(proc);
    },
  };
  child.once('exit', () => live.delete(proc));
  live.add(proc);
  return proc;
}

export async function stopAll(): Promise<void> {
  await Promise.all([...live].map((p) => p.stop(2000)));
}

/** Waits for a floor/helper program's `listening <port>` line. */
export async function waitListening(proc: Proc, timeoutMs = 20_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const m = /^listening (\d+)$/m.exec(proc.output());
    if (m) return Number(m[1]);
    if (proc.child.exitCode !== null) throw new Error(`${proc.name} exited early (${proc.child.exitCode}): ${tail(proc.output())}`);
    if (Date.now() > deadline) throw new Error(`${proc.name} did not start in ${timeoutMs / 1000} s: ${tail(proc.output())}`);
    await sleep(50);
  }
}

/** Polls `GET url` until it answers 200. */
export async function waitReady(proc: Proc, url: string, timeoutMs = 40_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc.child.exitCode !== null) throw new Error(`${proc.name} exited early (${proc.child.exitCode}): ${tail(proc.output())}`);
    const ok = await fetch(url).then((r) => r.status === 200).catch(() => false);
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`${proc.name} not ready in ${timeoutMs / 1000} s: ${tail(proc.output())}`);
    await sleep(100);
  }
}

export const tail = (s: string, n = 1500) => (s.length > n ? `…${s.slice(-n)}` : s).trim();

/** VmRSS and VmHWM of a process, in KB. */
export function memoryOf(pid: number): { rssKb: number; hwmKb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssKb: field('VmRSS'), hwmKb: field('VmHWM') };
}

/** CPU time (user + system) a process has used so far, in ms (/proc counts it in 1/100 s). */
export function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name: state is field 3, utime 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Resets VmHWM to the current RSS (Linux: clear_refs 5); false when not permitted. */
export function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}
