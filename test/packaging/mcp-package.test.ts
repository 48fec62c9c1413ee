// The packed tool server: `npm pack` of services/mcp, installed into an empty
// folder without the network, runs with nothing but Node and that package,
// done exactly as services/mcp/README.md says.
import { expect } from 'chai';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { codeBlocks, mcpConfigs } from '../support/markdown.js';
import { call, REPO_ROOT, run, startMcp } from '../support/mcp.js';

describe('the packed tool server (npm pack)', function () {
  this.timeout(120_000);

  it('installs offline into an empty folder and serves the five tools through its bin', async () => {
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'axid-mcp-pack-'));
    try {
      // services/mcp/README.md's commands and configuration, with its paths put in.
      const target = path.join(tmp, 'install');
      const paths: Record<string, string> = { '/path/to/axid-mcp': target, '/path/to/axid': REPO_ROOT, '/tmp': tmp };
      const fillIn = (text: string) => text.replace(/\/path\/to\/axid-mcp|\/path\/to\/axid|\/tmp\b/g, (p) => paths[p]!);
      const commands = codeBlocks('services/mcp/README.md').find((b) => b.lang === 'sh' && b.code.includes('npm pack'));
      const config = mcpConfigs('services/mcp/README.md').find((c) => c.command.endsWith('axid-mcp'));
      expect(commands, 'the README block that packs and installs').to.not.equal(undefined);
      expect(config, 'the README configuration of the packed server').to.not.equal(undefined);
      // Offline: the install must need nothing but the tarball.
      const env = { ...process.env, npm_config_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false' };
      const installed = await run('bash', ['-e', '-c', fillIn(commands!.code)], { cwd: tmp, env });
      expect(installed.code, installed.output).to.equal(0);
      expect(readdirSync(tmp).filter((f) => f.endsWith('.tgz'))).to.deep.equal(['axid-mcp-0.1.0.tgz']);
      // Nothing but the package itself: the bundle carries its dependencies.
      expect(readdirSync(path.join(target, 'node_modules')).filter((d) => !d.startsWith('.'))).to.deep.equal(['@axid']);

      const session = await startMcp({}, { command: fillIn(config!.command), args: config!.args ?? [] });
      try {
        const { tools } = await session.client.listTools();
        expect(tools.map((t) => t.name).sort()).to.deep.equal(['compose_block_message', 'inspect_workspace', 'scaffold_bot_project', 'send_test_message', 'setup_axid_bot']);
        const composed = await call(session.client, 'compose_block_message', { content_json: { type: 'doc', content: [{ type: 'block_divider', attrs: { blockName: 'divider', version: 1, props: {} } }] } });
        expect(composed.structuredContent).to.include({ valid: true });
        const scaffolded = await call(session.client, 'scaffold_bot_project', { bot_name: 'packed', target_runtime: 'vercel' });
        expect(scaffolded.structuredContent!.files).to.have.property('api/events.ts');
      } finally {
        await session.close();
      }
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
