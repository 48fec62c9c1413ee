// `npm start` as a user, a process manager or CI runs it: the signal goes to
// the npm process, and the whole process tree must be gone within the
// README's 10 s. Its output is the JSON log (and the bootstrap key, printed
// once on the first start), nothing else.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { expect } from 'chai';
import { freePort } from '../../shared/embedded.js';
import { processEnv, repoRoot } from '../support/stack-process.js';
import { testEnv } from '../support/stack.js';

/** pid → parent pid of every process (Linux /proc). */
function parents(): Map<number, number> {
  const all = new Map<number, number>();
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      all.set(Number(pid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // exited meanwhile
    }
  }
  return all;
}

function descendants(root: number): number[] {
  const all = parents();
  const found: number[] = [];
  const walk = (pid: number) => {
    for (const [child, parent] of all) if (parent === pid) (found.push(child), walk(child));
  };
  walk(root);
  return found;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The printed bootstrap key block (services/core/bootstrap.ts): its only non-JSON lines. */
const KEY_LINES = [/^$/, /^Axid owner API key \(shown once, keep it safe\):$/, /^ {2}axid_[\w-]+$/];

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  describe(`npm start and ${signal}`, function () {
    this.timeout(90_000);

    it(`stops the whole process tree within 10 s of ${signal} to the npm process, and logs only JSON`, async () => {
      const env = testEnv();
      const port = await freePort();
      const childEnv: Record<string, string | undefined> = { ...process.env, ...processEnv(env), HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'info' };
      delete childEnv.BOOTSTRAP_ADMIN_KEY; // a first start prints the owner key: the one non-JSON output there is
      delete childEnv.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED; // set in this process by the shared stack; a user's shell has none
      // --silent: npm's own banner and notices are npm's, not the server's log.
      const npm = spawn('npm', ['--silent', 'start'], { cwd: repoRoot, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      npm.stdout.on('data', (d) => (out += d));
      npm.stderr.on('data', (d) => (out += d));
      const npmExited = new Promise<void>((resolve) => npm.once('exit', () => resolve()));
      let tree: number[] = [];
      try {
        const deadline = Date.now() + 60_000;
        while (!(await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status === 200).catch(() => false))) {
          if (npm.exitCode !== null) throw new Error(`npm start exited early:\n${out}`);
          if (Date.now() > deadline) throw new Error(`npm start not ready in 60 s:\n${out}`);
          await new Promise((r) => setTimeout(r, 200));
        }
        tree = [npm.pid!, ...descendants(npm.pid!)];

        const sent = Date.now();
        npm.kill(signal);
        while (tree.some(alive) && Date.now() - sent < 10_000) await new Promise((r) => setTimeout(r, 50));
        const left = tree.filter(alive);
        expect(left, `processes still running 10 s after ${signal}`).to.deep.equal([]);
        await npmExited;

        const lines = out.replace(/\n$/, '').split('\n');
        const notJson = lines.filter((line) => {
          try {
            return typeof JSON.parse(line) !== 'object';
          } catch {
            return !KEY_LINES.some((re) => re.test(line));
          }
        });
        expect(notJson, `output lines that are not JSON:\n${out}`).to.deep.equal([]);
        const messages = lines.flatMap((line) => (line.startsWith('{') ? [JSON.parse(line).msg as string] : []));
        expect(messages).to.include('axid is listening');
        expect(messages).to.include('shutting down');
        expect(out).to.match(/^ {2}axid_[\w-]+$/m);
      } finally {
        for (const pid of tree.filter(alive)) process.kill(pid, 'SIGKILL');
        if (npm.exitCode === null && npm.signalCode === null) npm.kill('SIGKILL');
        await npmExited;
        await env.cleanup();
      }
    });
  });
}
