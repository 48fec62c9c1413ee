// The loadtest's namespace mode (LOADTEST_NETNS=1, test/loadtest/netns.ts) in
// its dry run: the load generator starts in a network namespace of its own,
// under its CPU quota, reaches a server of the run across the veth pair, and
// everything made for it (namespace, veth pair, cgroup, the load generator)
// is gone afterwards: at the end, and when the run is stopped midway. On a
// machine that forbids network namespaces the run must say so, in the words
// docs/bench.md documents, and exit with code 3.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { NETNS_REFUSED, running as alive } from '../loadtest/netns.js';
import { repoRoot } from '../support/stack-process.js';

interface DryRun {
  namespace: string;
  hostAddress: string;
  loadgenAddress: string;
  quota: { method: string; cpus: number; cgroup: string | null };
  probe: { status: number; body: string };
  loadgen: { pid: number; separateNetwork: boolean; cgroups: string[] };
}

/** Starts the dry run; resolves with its exit, output, and the dry run's JSON line once printed. */
function startDryRun(env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'test/loadtest/run.ts')], {
    cwd: repoRoot,
    env: { ...process.env, LOADTEST_NETNS: '1', LOADTEST_DRY_RUN: '1', LOADTEST_LOADGEN_CPUS: '0.5', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let announce: (d: DryRun) => void;
  const printed = new Promise<DryRun>((resolve) => (announce = resolve));
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
    const line = stdout.split('\n').find((l) => l.startsWith('{'));
    if (line && stdout.includes('\n')) announce(JSON.parse(line) as DryRun);
  });
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
  return { child, printed, exited };
}

const namespaces = () => execFileSync('ip', ['netns', 'list']).toString();
const links = () => execFileSync('ip', ['-o', 'link']).toString();

/** Nothing the run made is left: no namespace, no veth end, no cgroup, no load generator. */
function expectGone(run: DryRun) {
  expect(namespaces()).not.to.include(run.namespace);
  expect(links()).not.to.include(`axlg${run.namespace.slice('axidlg'.length)}`);
  if (run.quota.cgroup) expect(existsSync(run.quota.cgroup), run.quota.cgroup).to.equal(false);
  expect(alive(run.loadgen.pid), 'the load generator').to.equal(false);
}

describe('loadtest: the load generator in a network namespace of its own (dry run)', function () {
  this.timeout(60_000);

  it('starts it in its namespace under its quota, reaches the run over the veth pair, and removes everything at the end', async () => {
    const run = startDryRun();
    const { code, stdout, stderr } = await run.exited;
    if (code === 3) {
      // This machine forbids network namespaces: the documented refusal, and nothing else.
      expect(stderr).to.include(NETNS_REFUSED);
      expect(stdout).to.equal('');
      return;
    }
    expect(code, stderr).to.equal(0);
    const dry = JSON.parse(stdout.trim()) as DryRun;
    // The request came from the load generator's own address, over the pair.
    expect(dry.probe.status).to.equal(200);
    expect(JSON.parse(dry.probe.body)).to.deep.equal({ from: dry.loadgenAddress });
    expect(dry.loadgen.separateNetwork).to.equal(true);
    expect(dry.quota.cpus).to.equal(0.5);
    expect(dry.quota.method).to.be.oneOf(['cgroup v2 cpu.max', 'cgroup v1 cpu.cfs_quota_us', 'taskset', 'none']);
    if (dry.quota.cgroup) {
      // The load generator runs in the quota's cgroup.
      const leaf = path.basename(dry.quota.cgroup);
      expect(dry.loadgen.cgroups.some((line) => line.endsWith(`/${leaf}`))).to.equal(true);
    }
    expect(stderr).to.include(`namespace ${dry.namespace}`);
    expectGone(dry);
  });

  it('removes the namespace, the veth pair, the cgroup and the load generator when stopped midway', async () => {
    const run = startDryRun({ LOADTEST_DRY_RUN_HOLD_SECONDS: '30' });
    const first = await Promise.race([run.printed, run.exited]);
    if ('code' in first) {
      expect(first.code).to.equal(3);
      expect(first.stderr).to.include(NETNS_REFUSED);
      return;
    }
    // Up while it holds.
    expect(namespaces()).to.include(first.namespace);
    expect(alive(first.loadgen.pid)).to.equal(true);
    run.child.kill('SIGTERM');
    const { code } = await run.exited;
    expect(code).to.equal(143);
    expectGone(first);
  });
});
