// The packed tool server: `npm pack` of services/mcp, installed into an empty
// folder without the network, runs with nothing but Node and that package.
import { expect } from 'chai';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { call, REPO_ROOT, run, startMcp } from './support/mcp.js';

describe('the packed tool server (npm pack)', function () {
  this.timeout(120_000);

  it('installs offline into an empty folder and serves the five tools through its bin', async () => {
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'axid-mcp-pack-'));
    try {
      const packed = await run('npm', ['pack', '--pack-destination', tmp], { cwd: path.join(REPO_ROOT, 'services/mcp') });
      expect(packed.code, packed.output).to.equal(0);
      const tarball = readdirSync(tmp).find((f) => f.endsWith('.tgz'));
      expect(tarball, packed.output).to.be.a('string');

      const target = path.join(tmp, 'install');
      const installed = await run('npm', ['install', '--prefix', target, '--offline', '--no-audit', '--no-fund', '--ignore-scripts', path.join(tmp, tarball!)], { cwd: tmp });
      expect(installed.code, installed.output).to.equal(0);
      // Nothing but the package itself: the bundle carries its dependencies.
      expect(readdirSync(path.join(target, 'node_modules')).filter((d) => !d.startsWith('.'))).to.deep.equal(['@axid']);

      const bin = path.join(target, 'node_modules/.bin/axid-mcp');
      const session = await startMcp({}, { command: bin, args: [] });
      try {
        const { tools } = await session.client.listTools();
        expect(tools.map((t) => t.name).sort()).to.deep.equal(['compose_block_message', 'inspect_workspace', 'scaffold_bot_project', 'send_test_message', 'setup_axid_bot']);
        const composed = await call(session.client, 'compose_block_message', { content_json: { type: 'doc', content: [{ type: 'block_divider', attrs: { blockName: 'divider', version: 1, props: {} } }] } });
        expect(composed.structuredContent).to.include({ valid: true });
        const scaffolded = await call(session.client, 'scaffold_bot_project', { bot_name: 'packed', target_runtime: 'vercel' });
        expect(scaffolded.structuredContent!.files).to.have.property('api/poll.ts');
      } finally {
        await session.close();
      }
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
