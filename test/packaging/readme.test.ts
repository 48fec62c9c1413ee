// The READMEs run as written. The first steps: every shell block of that
// section goes through bash and curl against the test stack, with the printed
// key and the address put in, and each answer must have the status shown. The
// tool server: the client configurations start it and list its tools.
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '../support/client.js';
import { codeBlocks, mcpConfigs } from '../support/markdown.js';
import { REPO_ROOT } from '../support/mcp.js';
import { newWorkspace, stack } from '../support/stack.js';

const PATH_WITH_NODE = `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}`;

/** Text a child writes, and a way to wait for some of it. */
class Output {
  text = '';
  private waiters: (() => void)[] = [];
  add(chunk: Buffer) {
    this.text += chunk.toString();
    for (const wake of this.waiters.splice(0)) wake();
  }
  waitFor(pred: (text: string) => boolean, what: string, timeoutMs = 15_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}; got:\n${this.text}`)), timeoutMs);
      const check = () => {
        if (pred(this.text)) {
          clearTimeout(timer);
          resolve();
        } else {
          this.waiters.push(check);
        }
      };
      check();
    });
  }
}

/** One bash session, as in a terminal: variables set by a block stay for the next. */
class Shell {
  private readonly child: ChildProcess;
  private readonly stdout = new Output();
  private readonly stderr = new Output();

  constructor() {
    this.child = spawn('bash', ['--noprofile', '--norc'], { env: { ...process.env, PATH: PATH_WITH_NODE }, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout!.on('data', (c: Buffer) => this.stdout.add(c));
    this.child.stderr!.on('data', (c: Buffer) => this.stderr.add(c));
    // set -a: what a block assigns is exported, so a second terminal can be given it.
    // curl also writes each answer's status to stderr, leaving its output alone.
    this.child.stdin!.write(`set -a\ncurl() { command curl --write-out '%{stderr}HTTP %{http_code}\\n' "$@"; }\n`);
  }

  /** Runs code; resolves with what it wrote and the statuses of its curl calls. */
  async run(code: string): Promise<{ stdout: string; stderr: string; statuses: number[] }> {
    const marker = `__done_${randomBytes(4).toString('hex')}__`;
    const out0 = this.stdout.text.length;
    const err0 = this.stderr.text.length;
    // The two pipes are read apart: the end is marked on each.
    this.child.stdin!.write(`${code}\necho ${marker}; echo ${marker} >&2\n`);
    await this.stderr.waitFor((t) => t.includes(marker, err0), `the end of:\n${code}`);
    await this.stdout.waitFor((t) => t.includes(marker, out0), `the end of:\n${code}`);
    const stderr = this.stderr.text.slice(err0, this.stderr.text.indexOf(marker, err0));
    const statuses = [...stderr.matchAll(/^HTTP (\d{3})$/gm)].map((m) => Number(m[1]));
    return { stdout: this.stdout.text.slice(out0, this.stdout.text.indexOf(marker, out0)), stderr, statuses };
  }

  close() {
    this.child.stdin!.end();
    this.child.kill();
  }
}

/** The statuses a block shows after its commands: `# → 201`. */
const shownStatuses = (code: string) => [...code.matchAll(/# → (\d{3})/g)].map((m) => Number(m[1]));

describe('README: first steps', function () {
  this.timeout(90_000);

  it('every command of the walkthrough succeeds as shown, and the stream shows the posts', async () => {
    const blocks = codeBlocks('README.md').filter((b) => b.lang === 'sh' && b.heading.startsWith('First steps'));
    const streamBlock = blocks.find((b) => b.code.includes('curl -N'));
    const messageBlock = blocks.find((b) => b.code.includes('/messages') && b.code.includes('"metadata"'));
    expect(blocks.length, 'shell blocks under "First steps"').to.be.at.least(5);
    expect(streamBlock, 'the stream block').to.not.equal(undefined);
    expect(messageBlock, 'the message block').to.not.equal(undefined);

    const ws = await newWorkspace();
    const address = stack().url.replace(/^http:\/\//, '');
    const adapt = (code: string) => code.replaceAll('localhost:3000', address).replace(/^KEY=\S+/m, `KEY='${ws.ownerKey}'`);
    expect(blocks[0]!.code, 'the walkthrough starts from the printed key').to.match(/^KEY=axid_\S*/m);

    const shell = new Shell();
    let streamProcess: ChildProcess | null = null;
    const stream = new Output();
    try {
      for (const block of blocks) {
        if (block === streamBlock) {
          // "In a second terminal": the same variables, its own process.
          const { stdout: exported } = await shell.run('export -p');
          streamProcess = spawn('bash', ['--noprofile', '--norc', '-c', `${exported}\n${adapt(block.code)}`], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
          streamProcess.stdout!.on('data', (c: Buffer) => stream.add(c));
          await stream.waitFor((t) => t.startsWith('event: init\n'), 'the init frame');
          // "then post the message above again"
          const again = await shell.run(adapt(messageBlock!.code));
          expect(again.statuses, again.stderr).to.deep.equal(shownStatuses(messageBlock!.code));
          await stream.waitFor((t) => /event: message\.created\ndata: .*"type":"build\.finished"/.test(t), 'message.created with its metadata');
          continue;
        }
        const result = await shell.run(adapt(block.code));
        expect(result.statuses, `${block.code}\n${result.stderr}\n${result.stdout}`).to.deep.equal(shownStatuses(block.code));
      }

      // The webhook posts came through the stream too, and are in the channel.
      await stream.waitFor((t) => t.includes('Deploy of v1.2.3 finished') && t.includes('Build 42 passed'), 'the webhook messages on the stream');
      const channelId = (await shell.run('echo "$CHANNEL_ID"')).stdout.trim();
      const history = await ws.owner.get(`/api/v1/channels/${channelId}/messages`);
      expect(history.status).to.equal(200);
      const contents = history.body.data.map((m: { content: string }) => m.content);
      expect(contents).to.include.members(['Deploy of v1.2.3 finished', 'Build 42 passed']);
      const native = history.body.data.find((m: { content: string }) => m.content === 'Deploy of v1.2.3 finished');
      expect(native.metadata).to.deep.equal({ type: 'deploy.finished', data: { version: '1.2.3' } });
    } finally {
      shell.close();
      if (streamProcess?.pid && streamProcess.exitCode === null) {
        const exited = new Promise((resolve) => streamProcess!.once('exit', resolve));
        process.kill(-streamProcess.pid, 'SIGTERM');
        await exited;
      }
    }
  });

  it('metadata of another shape gets the 400 the README describes, naming the field', async () => {
    const ws = await newWorkspace();
    const channel = await ws.owner.post('/api/v1/channels', { name: `readme-${randomBytes(3).toString('hex')}` });
    const res = await new Client(stack().url, ws.ownerKey).post(`/api/v1/channels/${channel.body.data.id}/messages`, { content: 'Build 42 passed', metadata: { build: 42 } });
    expect(res.status).to.equal(400);
    expect(res.body.error.code).to.equal('validation_error');
    expect(res.body.error.message).to.match(/^metadata/);
  });
});

describe('README: the tool server configurations', function () {
  this.timeout(60_000);

  it('names no package that does not exist', () => {
    for (const file of ['README.md', 'services/mcp/README.md', 'docs/realtime.md', 'docs/webhooks.md', 'docs/decisions.md']) {
      expect(readFileSync(path.join(REPO_ROOT, file), 'utf8'), file).to.not.match(/npx[^\n]*@axid\/mcp/);
    }
  });

  it('starts the server from a clone as configured, from another working directory, with the five tools', async () => {
    const fromClone = [...mcpConfigs('README.md'), ...mcpConfigs('services/mcp/README.md')].filter((c) => !c.command.includes('axid-mcp'));
    // Claude Code's `claude mcp add axid --env K=V … -- command args…`
    const claudeLine = codeBlocks('services/mcp/README.md')
      .filter((b) => b.lang === 'sh')
      .flatMap((b) => b.code.split('\n'))
      .find((l) => l.startsWith('claude mcp add '));
    expect(claudeLine, 'the Claude Code command').to.be.a('string');
    const [options, command] = claudeLine!.split(' -- ') as [string, string];
    const env = Object.fromEntries([...options.matchAll(/--env (\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!]));
    const [claudeCommand, ...claudeArgs] = command.split(/\s+/);
    fromClone.push({ command: claudeCommand!, args: claudeArgs, env });
    expect(fromClone.length).to.equal(3);

    // All three are one command; it is started once.
    const commands = new Set(fromClone.map((c) => JSON.stringify([c.command, ...(c.args ?? [])])));
    expect(commands.size, [...commands].join('\n')).to.equal(1);
    for (const c of fromClone) expect(Object.keys(c.env ?? {}).sort()).to.deep.equal(['AXID_API_KEY', 'AXID_BASE_URL']);

    const [config] = fromClone;
    const elsewhere = mkdtempSync(path.join(os.tmpdir(), 'axid-mcp-client-'));
    const transport = new StdioClientTransport({
      command: config!.command,
      args: (config!.args ?? []).map((a) => a.replace('/path/to/axid', REPO_ROOT)),
      cwd: elsewhere,
      env: { ...getDefaultEnvironment(), ...config!.env, PATH: PATH_WITH_NODE },
      stderr: 'pipe',
    });
    const client = new McpClient({ name: 'readme-test', version: '1.0.0' });
    try {
      await client.connect(transport);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).to.deep.equal(['compose_block_message', 'inspect_workspace', 'scaffold_bot_project', 'send_test_message', 'setup_axid_bot']);
    } finally {
      await client.close();
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});
